import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { FormEvent } from 'react';
import { api, unwrap, type QueryOf, type Schemas } from '../api/client';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { Pagination } from '../components/Pagination';
import { formatMoney, formatTime, localToIso } from '../lib/format';
import { useCan } from '../lib/session-context';
import { useListParams } from '../lib/use-page-param';

type Status = Schemas['Message']['status'];

const STATUSES: Status[] = ['pending', 'sent', 'delivered', 'failed', 'undelivered'];
/** Filters whose value is a local date and time in the form, and an ISO date-time in the request. */
const DATE_FILTERS = [
  ['created_after', 'Created after'],
  ['created_before', 'Created before'],
  ['send_after', 'Scheduled after'],
  ['send_before', 'Scheduled before'],
] as const;
/** While a message shown can still change, the page is read again this often. */
const LIVE_REFRESH_MS = 2000;

function queryOf(params: URLSearchParams, page: number): QueryOf<'listMessages'> {
  const scheduled = params.get('scheduled');
  return {
    page,
    limit: 25,
    status: (params.get('status') as Status | null) ?? undefined,
    to: params.get('to') || undefined,
    scheduled: scheduled === null ? undefined : scheduled === 'true',
    ...Object.fromEntries(DATE_FILTERS.map(([name]) => [name, localToIso(params.get(name))])),
  };
}

export function Messages() {
  const can = useCan();
  const { params, page, setPage, setFilters } = useListParams();
  const query = queryOf(params, page);
  const messages = useQuery({
    queryKey: ['messages', query],
    queryFn: () => unwrap(api.GET('/messages', { params: { query } })),
    refetchInterval: (current) =>
      current.state.data?.data.some((message) => message.status === 'pending' || message.status === 'sent') ? LIVE_REFRESH_MS : false,
  });

  function filter(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setFilters(Object.fromEntries([...form.entries()].map(([name, value]) => [name, String(value).trim()])));
  }

  return (
    <>
      <div className="title-row">
        <h1>Messages</h1>
        {can('sms:send') && (
          <Link className="button" to="/send">
            Send a message
          </Link>
        )}
      </div>
      <form className="filters" onSubmit={filter} aria-label="Filter messages">
        <label>
          Status
          <select name="status" defaultValue={params.get('status') ?? ''}>
            <option value="">Any</option>
            {STATUSES.map((status) => (
              <option key={status}>{status}</option>
            ))}
          </select>
        </label>
        <label>
          To
          <input name="to" type="tel" placeholder="+447400123456" pattern="\+[1-9][0-9]{1,14}" defaultValue={params.get('to') ?? ''} />
        </label>
        <label>
          Scheduled
          <select name="scheduled" defaultValue={params.get('scheduled') ?? ''}>
            <option value="">Any</option>
            <option value="true">Scheduled only</option>
            <option value="false">Not scheduled</option>
          </select>
        </label>
        {DATE_FILTERS.map(([name, label]) => (
          <label key={name}>
            {label}
            <input name={name} type="datetime-local" defaultValue={params.get(name) ?? ''} />
          </label>
        ))}
        <div className="filter-actions">
          <button type="submit">Filter</button>
          <button type="reset" onClick={() => setFilters({})}>
            Clear
          </button>
        </div>
      </form>
      <ErrorNotice error={messages.error} />
      {messages.isPending && <p aria-live="polite">Loading messages…</p>}
      {messages.data && messages.data.data.length === 0 && (
        <EmptyState>
          {params.size > 0 ? 'No message matches these filters — clear them to see every message.' : 'No message yet — '}
          {params.size === 0 && (can('sms:send') ? <Link to="/send">send your first one</Link> : 'messages sent with the API appear here')}.
        </EmptyState>
      )}
      {messages.data && messages.data.data.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Messages, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">To</th>
                  <th scope="col">Status</th>
                  <th scope="col">Segments</th>
                  <th scope="col">Cost</th>
                  <th scope="col">Route</th>
                  <th scope="col">Scheduled for</th>
                </tr>
              </thead>
              <tbody>
                {messages.data.data.map((message) => (
                  <tr key={message.id}>
                    <td>
                      <Link to={`/messages/${message.id}`}>{formatTime(message.created_at)}</Link>
                    </td>
                    <td>{message.to}</td>
                    <td>
                      <span className={`status status-${message.status}`}>{message.status}</span>
                    </td>
                    <td>{message.segments}</td>
                    <td>{formatMoney(message.cost, message.currency)}</td>
                    <td>{message.route_id ?? '—'}</td>
                    <td>{message.send_at ? formatTime(message.send_at) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={messages.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
