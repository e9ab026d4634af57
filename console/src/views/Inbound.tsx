import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { Pagination } from '../components/Pagination';
import { formatTime, localToIso } from '../lib/format';
import { useListParams } from '../lib/use-page-param';

export function Inbound() {
  const { params, page, setPage, setFilters } = useListParams();
  const query = {
    page,
    limit: 25,
    from: params.get('from') || undefined,
    to: params.get('to') || undefined,
    created_after: localToIso(params.get('created_after')),
    created_before: localToIso(params.get('created_before')),
  };
  const inbound = useQuery({ queryKey: ['inbound', query], queryFn: () => unwrap(api.GET('/inbound-messages', { params: { query } })) });

  function filter(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setFilters(Object.fromEntries([...new FormData(event.currentTarget).entries()].map(([name, value]) => [name, String(value).trim()])));
  }

  return (
    <>
      <h1>Inbound messages</h1>
      <form className="filters" onSubmit={filter} aria-label="Filter inbound messages">
        <label>
          From
          <input name="from" type="tel" placeholder="+447400123456" defaultValue={params.get('from') ?? ''} />
        </label>
        <label>
          To (your number)
          <input name="to" type="tel" defaultValue={params.get('to') ?? ''} />
        </label>
        <label>
          Received after
          <input name="created_after" type="datetime-local" defaultValue={params.get('created_after') ?? ''} />
        </label>
        <label>
          Received before
          <input name="created_before" type="datetime-local" defaultValue={params.get('created_before') ?? ''} />
        </label>
        <div className="filter-actions">
          <button type="submit">Filter</button>
          <button type="reset" onClick={() => setFilters({})}>
            Clear
          </button>
        </div>
      </form>
      <ErrorNotice error={inbound.error} />
      {inbound.data && inbound.data.data.length === 0 && (
        <EmptyState>No inbound message yet — replies to your numbers appear here once your operator routes them to this account.</EmptyState>
      )}
      {inbound.data && inbound.data.data.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">Message</th>
                  <th scope="col">Keyword</th>
                </tr>
              </thead>
              <tbody>
                {inbound.data.data.map((message) => (
                  <tr key={message.id}>
                    <td>{formatTime(message.received_at)}</td>
                    <td>{message.from}</td>
                    <td>{message.to}</td>
                    <td className="body-text">
                      {message.body}
                      {!message.complete && <span className="help"> (parts missing)</span>}
                    </td>
                    <td>{message.keyword ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={inbound.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
