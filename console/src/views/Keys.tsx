import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { Confirm } from '../components/Confirm';
import { CopyButton } from '../components/CopyButton';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatTime } from '../lib/format';
import { useCan } from '../lib/session-context';
import type { Scope } from '../lib/session';

const SCOPES: Scope[] = [
  'sms:send',
  'sms:bulk',
  'sms:read',
  'balance:read',
  'dlr:read',
  'account:read',
  'senders:read',
  'senders:write',
  'keys:read',
  'keys:write',
  'webhooks:read',
  'webhooks:write',
];

function CreateKey({ onCreated }: { onCreated: (key: Schemas['ApiKeyWithSecret']) => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(SCOPES));
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api-keys/create', { body: { name: name.trim(), permissions: [...scopes] } })),
    onSuccess: (body) => {
      onCreated(body.data);
      setName('');
      void queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  function toggle(scope: Scope, on: boolean) {
    setScopes((current) => {
      const next = new Set(current);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <label>
        Name
        <input required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <fieldset className="scopes">
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label key={scope} className="inline">
            <input type="checkbox" checked={scopes.has(scope)} onChange={(event) => toggle(scope, event.target.checked)} /> {scope}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={create.isPending || scopes.size === 0}>
        Create key
      </button>
      <ErrorNotice error={create.error} />
    </form>
  );
}

export function Keys() {
  const can = useCan();
  const queryClient = useQueryClient();
  const [created, setCreated] = useState<Schemas['ApiKeyWithSecret'] | null>(null);
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: () => unwrap(api.GET('/api-keys')) });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api-keys/{id}', { params: { path: { id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  const list = keys.data?.data.data ?? [];

  return (
    <>
      <h1>API keys</h1>
      {created && (
        <div className="notice" role="status">
          <p>
            Key <strong>{created.name}</strong> created. Copy it now: it is shown this once.
          </p>
          <p>
            <code data-testid="plain-key">{created.plain_key}</code> <CopyButton text={created.plain_key} label="Copy key" />
          </p>
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      {can('keys:write') && <CreateKey onCreated={setCreated} />}
      <ErrorNotice error={keys.error ?? revoke.error} />
      {keys.data && list.length === 0 && <EmptyState>No key — create one above.</EmptyState>}
      {list.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">Last used</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {list.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.key_hint}</code>
                  </td>
                  <td className="scope-list">{key.permissions.join(', ')}</td>
                  <td>{key.last_used_at ? formatTime(key.last_used_at) : 'never'}</td>
                  <td>{formatTime(key.created_at)}</td>
                  <td>
                    {key.is_active ? 'active' : 'revoked'}
                    {key.is_active && can('keys:write') && (
                      <>
                        {' '}
                        <Confirm
                          label={`Revoke ${key.name}`}
                          question="Requests with this key will be refused at once."
                          confirmLabel="Revoke"
                          onConfirm={() => revoke.mutate(key.id)}
                        />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
