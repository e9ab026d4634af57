import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { Confirm } from '../components/Confirm';
import { CopyButton } from '../components/CopyButton';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { Pagination } from '../components/Pagination';
import { formatTime } from '../lib/format';
import { useCan } from '../lib/session-context';

type Endpoint = Schemas['WebhookEndpoint'];
type EventType = Endpoint['events'][number];
const EVENT_TYPES: EventType[] = [
  'message.sent',
  'message.delivered',
  'message.failed',
  'message.received',
  'recipient.opted_out',
  'recipient.opted_in',
  'balance.low',
];
/** While an endpoint's attempts are shown, they are read again this often: a delivery follows its event. */
const ATTEMPTS_REFRESH_MS = 2000;

function Secret({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <div className="notice" role="status">
      <p>The signing secret, shown this once:</p>
      <p>
        <code>{secret}</code> <CopyButton text={secret} label="Copy secret" />
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

function CreateEndpoint({ onSecret }: { onSecret: (secret: string) => void }) {
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Set<EventType>>(new Set());
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/webhooks/create', { body: { url: url.trim(), events: events.size === 0 ? ['*'] : [...events] } })),
    onSuccess: (body) => {
      onSecret(body.data.signing_secret);
      setUrl('');
      void queryClient.invalidateQueries({ queryKey: ['webhooks'] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-endpoint">
      <h2 id="create-endpoint">Add an endpoint</h2>
      <label>
        URL
        <input type="url" required placeholder="https://example.com/dispatch" value={url} onChange={(event) => setUrl(event.target.value)} />
      </label>
      <fieldset className="scopes">
        <legend>Events (none chosen: every event)</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} className="inline">
            <input
              type="checkbox"
              checked={events.has(type)}
              onChange={(event) =>
                setEvents((current) => {
                  const next = new Set(current);
                  if (event.target.checked) next.add(type);
                  else next.delete(type);
                  return next;
                })
              }
            />{' '}
            {type}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={create.isPending}>
        Add endpoint
      </button>
      <ErrorNotice error={create.error} />
    </form>
  );
}

function Attempts({ endpoint }: { endpoint: Endpoint }) {
  const can = useCan();
  const [page, setPage] = useState(1);
  const attempts = useQuery({
    queryKey: ['webhook-attempts', endpoint.id, page],
    queryFn: () => unwrap(api.GET('/webhooks/{id}/attempts', { params: { path: { id: endpoint.id }, query: { page, limit: 10 } } })),
    refetchInterval: ATTEMPTS_REFRESH_MS,
  });
  const resend = useMutation({
    mutationFn: (eventId: string) => unwrap(api.POST('/webhooks/{id}/events/{event_id}/resend', { params: { path: { id: endpoint.id, event_id: eventId } } })),
  });
  const list = attempts.data?.data ?? [];
  return (
    <section aria-label={`Attempts to ${endpoint.url}`}>
      <ErrorNotice error={attempts.error ?? resend.error} />
      {resend.isSuccess && <p role="status">Resent: the delivery follows.</p>}
      {attempts.data && list.length === 0 && <EmptyState>No delivery yet — send a test event to try the endpoint.</EmptyState>}
      {list.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Outcome</th>
                <th scope="col">Response</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {list.map((attempt) => (
                <tr key={attempt.id}>
                  <td>{formatTime(attempt.created_at)}</td>
                  <td>
                    <code>{attempt.event_id}</code>
                  </td>
                  <td>{attempt.attempt}</td>
                  <td>
                    {attempt.succeeded ? 'succeeded' : 'failed'}
                    {!attempt.succeeded && can('webhooks:write') && (
                      <>
                        {' '}
                        <button type="button" onClick={() => resend.mutate(attempt.event_id)} disabled={resend.isPending}>
                          Resend
                        </button>
                      </>
                    )}
                  </td>
                  <td data-testid="attempt-response">{attempt.status_code ?? attempt.error ?? '—'}</td>
                  <td>{attempt.duration_ms} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {attempts.data && <Pagination pagination={attempts.data.pagination} onPage={setPage} />}
    </section>
  );
}

function EndpointCard({ endpoint, onSecret }: { endpoint: Endpoint; onSecret: (secret: string) => void }) {
  const can = useCan();
  const queryClient = useQueryClient();
  const [showAttempts, setShowAttempts] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['webhooks'] });
  const test = useMutation({
    mutationFn: () => unwrap(api.POST('/webhooks/{id}/test', { params: { path: { id: endpoint.id } } })),
    onSuccess: () => setShowAttempts(true),
  });
  const toggle = useMutation({
    mutationFn: () => unwrap(api.PATCH('/webhooks/{id}', { params: { path: { id: endpoint.id } }, body: { is_active: !endpoint.is_active } })),
    onSettled: refresh,
  });
  const rotate = useMutation({
    mutationFn: () => unwrap(api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: endpoint.id } }, body: {} })),
    onSuccess: (body) => onSecret(body.data.signing_secret),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/webhooks/{id}', { params: { path: { id: endpoint.id } } })),
    onSettled: refresh,
  });
  return (
    <article className="card">
      <h2 className="endpoint-url">{endpoint.url}</h2>
      <p>
        {endpoint.is_active ? 'Enabled' : `Disabled${endpoint.disabled_at ? ` since ${formatTime(endpoint.disabled_at)}` : ''}`} · events{' '}
        {endpoint.events.join(', ')} · {endpoint.failure_count} failure{endpoint.failure_count === 1 ? '' : 's'} in a row · last success{' '}
        {formatTime(endpoint.last_success_at)}
      </p>
      <div className="actions">
        <button type="button" aria-expanded={showAttempts} onClick={() => setShowAttempts(!showAttempts)}>
          {showAttempts ? 'Hide attempts' : 'Show attempts'}
        </button>
        {can('webhooks:write') && (
          <>
            <button type="button" onClick={() => test.mutate()} disabled={test.isPending || !endpoint.is_active}>
              Send test event
            </button>
            <button type="button" onClick={() => toggle.mutate()} disabled={toggle.isPending}>
              {endpoint.is_active ? 'Disable' : 'Enable'}
            </button>
            <Confirm label="Rotate secret" question="The old secret stays valid for 24 hours." confirmLabel="Rotate" onConfirm={() => rotate.mutate()} />
            <Confirm label="Delete" question="Deliveries to this endpoint stop." confirmLabel="Delete endpoint" onConfirm={() => remove.mutate()} />
          </>
        )}
      </div>
      {test.isSuccess && (
        <p role="status">
          Test event <code>{test.data.data.id}</code> recorded; its delivery follows.
        </p>
      )}
      <ErrorNotice error={test.error ?? toggle.error ?? rotate.error ?? remove.error} />
      {showAttempts && <Attempts endpoint={endpoint} />}
    </article>
  );
}

export function Webhooks() {
  const can = useCan();
  const [secret, setSecret] = useState<string | null>(null);
  const endpoints = useQuery({ queryKey: ['webhooks'], queryFn: () => unwrap(api.GET('/webhooks')) });
  const list = endpoints.data?.data.data ?? [];
  return (
    <>
      <h1>Webhooks</h1>
      {secret && <Secret secret={secret} onDone={() => setSecret(null)} />}
      {can('webhooks:write') && <CreateEndpoint onSecret={setSecret} />}
      <ErrorNotice error={endpoints.error} />
      {endpoints.data && list.length === 0 && (
        <EmptyState>{can('webhooks:write') ? 'No endpoint yet — add one above to receive events.' : 'No endpoint yet.'}</EmptyState>
      )}
      {list.map((endpoint) => (
        <EndpointCard key={endpoint.id} endpoint={endpoint} onSecret={setSecret} />
      ))}
    </>
  );
}
