import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../../api/client';
import { Confirm } from '../../components/Confirm';
import { CopyButton } from '../../components/CopyButton';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Pagination } from '../../components/Pagination';
import { formatTime } from '../../lib/format';
import { useListParams } from '../../lib/use-page-param';

type Role = Schemas['OperatorRole'];
const ROLES: { role: Role; reach: string }[] = [
  { role: 'viewer', reach: 'reads everything' },
  { role: 'support', reach: 'also adds account notes and resends webhook events' },
  { role: 'admin', reach: 'may do everything, operators included' },
];

function CreateOperator({ onCreated }: { onCreated: (operator: Schemas['OperatorWithToken']) => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/admin/operators', { body: { name: name.trim(), role } })),
    onSuccess: (body) => {
      setName('');
      onCreated(body.data);
      void queryClient.invalidateQueries({ queryKey: ['admin-operators'] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-operator">
      <h2 id="create-operator">Add an operator</h2>
      <div className="inline-form">
        <label>
          Name
          <input required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(event) => setRole(event.target.value as Role)}>
            {ROLES.map(({ role: value, reach }) => (
              <option key={value} value={value}>
                {value} — {reach}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={create.isPending}>
          Create operator
        </button>
      </div>
      <ErrorNotice error={create.error} />
    </form>
  );
}

/** The operators with their roles (admin): a new one's token is shown once; a revoked one is refused at once. */
export function Operators() {
  const queryClient = useQueryClient();
  const { page, setPage } = useListParams();
  const [created, setCreated] = useState<Schemas['OperatorWithToken'] | null>(null);
  const operators = useQuery({
    queryKey: ['admin-operators', page],
    queryFn: () => unwrap(api.GET('/admin/operators', { params: { query: { page, limit: 25 } } })),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/admin/operators/{id}/revoke', { params: { path: { id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['admin-operators'] }),
  });
  const list = operators.data?.data ?? [];
  return (
    <>
      <h1>Operators</h1>
      {created && (
        <div className="notice" role="status">
          <p>
            Operator <strong>{created.name}</strong> ({created.role}) created. Copy the token now: it is shown this once.
          </p>
          <p>
            <code data-testid="operator-token">{created.token}</code> <CopyButton text={created.token} label="Copy token" />
          </p>
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <CreateOperator onCreated={setCreated} />
      <ErrorNotice error={operators.error ?? revoke.error} />
      {operators.data && list.length === 0 && <EmptyState>No operator yet: only the admin token signs in. Add one above.</EmptyState>}
      {list.length > 0 && operators.data && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Created</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {list.map((operator) => (
                  <tr key={operator.id}>
                    <td>{operator.name}</td>
                    <td>{operator.role}</td>
                    <td>{operator.last_used_at ? formatTime(operator.last_used_at) : 'never'}</td>
                    <td>{formatTime(operator.created_at)}</td>
                    <td>
                      {operator.revoked_at ? `revoked ${formatTime(operator.revoked_at)}` : 'active'}
                      {!operator.revoked_at && (
                        <>
                          {' '}
                          <Confirm
                            label={`Revoke ${operator.name}`}
                            question="This operator's token will be refused at once."
                            confirmLabel="Revoke"
                            onConfirm={() => revoke.mutate(operator.id)}
                          />
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={operators.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
