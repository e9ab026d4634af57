import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap, type QueryOf } from '../../api/client';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Pagination } from '../../components/Pagination';
import { formatMoney, formatTime } from '../../lib/format';
import { useListParams } from '../../lib/use-page-param';

type Query = QueryOf<'adminListMessages'>;
type Status = NonNullable<Query['status']>;
const STATUSES: Status[] = ['pending', 'sent', 'delivered', 'failed', 'undelivered'];
const FILTERS = ['to', 'account_id', 'status', 'error_code', 'provider_message_id'] as const;

/** The messages of every account, found by number, account, status, error code or an upstream's id; a message id opens its story at once. */
export function Messages() {
  const navigate = useNavigate();
  const { params, page, setPage, setFilters } = useListParams();
  const current = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Record<(typeof FILTERS)[number], string>;
  const [form, setForm] = useState({ ...current, id: '' });
  // The client encodes each value: the `+` of a number reaches the API as %2B, not as a space.
  const query: Query = {
    page,
    limit: 25,
    ...(current.to && { to: current.to }),
    ...(current.account_id && { account_id: current.account_id }),
    ...(current.status && { status: current.status as Status }),
    ...(current.error_code && { error_code: current.error_code }),
    ...(current.provider_message_id && { provider_message_id: current.provider_message_id }),
  };
  const messages = useQuery({ queryKey: ['admin-messages', query], queryFn: () => unwrap(api.GET('/admin/messages', { params: { query } })) });
  function submit(event: FormEvent) {
    event.preventDefault();
    const id = form.id.trim();
    if (id) {
      void navigate(`/operator/messages/${encodeURIComponent(id)}`);
      return;
    }
    setFilters({
      to: form.to.trim(),
      account_id: form.account_id.trim(),
      status: form.status,
      error_code: form.error_code.trim(),
      provider_message_id: form.provider_message_id.trim(),
    });
  }
  const field = (name: keyof typeof form) => ({
    value: form[name],
    onChange: (event: { target: { value: string } }) => setForm({ ...form, [name]: event.target.value }),
  });
  const list = messages.data?.data ?? [];
  return (
    <>
      <h1>Messages</h1>
      <form className="filters" role="search" aria-label="Messages" onSubmit={submit}>
        <label>
          To (E.164)
          <input type="search" inputMode="tel" placeholder="+447400123456" {...field('to')} />
        </label>
        <label>
          Account
          <input type="search" placeholder="acct_…" {...field('account_id')} />
        </label>
        <label>
          Status
          <select {...field('status')}>
            <option value="">Any</option>
            {STATUSES.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </label>
        <label>
          Error code
          <input type="search" {...field('error_code')} />
        </label>
        <label>
          Provider message id
          <input type="search" placeholder="the upstream's reference" {...field('provider_message_id')} />
        </label>
        <label>
          Message id (opens it)
          <input type="search" placeholder="msg_…" {...field('id')} />
        </label>
        <div className="filter-actions">
          <button type="submit">Search</button>
        </div>
      </form>
      <ErrorNotice error={messages.error} />
      {messages.data && list.length === 0 && <EmptyState>No message matches — change the search.</EmptyState>}
      {list.length > 0 && messages.data && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">To</th>
                  <th scope="col">From</th>
                  <th scope="col">Account</th>
                  <th scope="col">Status</th>
                  <th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {list.map((message) => (
                  <tr key={message.id}>
                    <td>
                      <Link to={`/operator/messages/${message.id}`}>{formatTime(message.created_at)}</Link>
                    </td>
                    <td>{message.to}</td>
                    <td>{message.from}</td>
                    <td>
                      <Link to={`/operator/accounts/${message.account_id}`}>
                        <code>{message.account_id}</code>
                      </Link>
                    </td>
                    <td>
                      <span className={`status status-${message.status}`}>{message.status}</span>
                    </td>
                    <td>{formatMoney(message.cost, message.currency)}</td>
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
