import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { Confirm } from '../components/Confirm';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { Pagination } from '../components/Pagination';
import { formatTime } from '../lib/format';
import { parseRecipients } from '../lib/recipients';
import { useCan } from '../lib/session-context';
import { useListParams } from '../lib/use-page-param';

function AddOptOuts() {
  const queryClient = useQueryClient();
  const [numbers, setNumbers] = useState('');
  const [reason, setReason] = useState('');
  const add = useMutation({
    mutationFn: () => unwrap(api.POST('/opt-outs/create', { body: { numbers: parseRecipients(numbers), reason: reason.trim() || null } })),
    onSuccess: () => {
      setNumbers('');
      void queryClient.invalidateQueries({ queryKey: ['opt-outs'] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    add.mutate();
  }
  const result = add.data?.data;
  return (
    <form className="card" onSubmit={submit} aria-labelledby="add-opt-outs">
      <h2 id="add-opt-outs">Add opt-outs</h2>
      <label>
        Numbers, one per line
        <textarea required rows={3} value={numbers} onChange={(event) => setNumbers(event.target.value)} />
      </label>
      <label>
        Reason (optional)
        <input maxLength={500} value={reason} onChange={(event) => setReason(event.target.value)} />
      </label>
      <button type="submit" disabled={add.isPending}>
        Add
      </button>
      {result && (
        <div role="status">
          <p>
            {result.added} added, {result.unchanged} already opted out, {result.failed} refused.
          </p>
          {result.failed > 0 && (
            <ul>
              {result.results
                .filter((row) => row.error)
                .map((row) => (
                  <li key={row.number}>
                    {row.number}: {row.error?.message}
                  </li>
                ))}
            </ul>
          )}
        </div>
      )}
      <ErrorNotice error={add.error} />
    </form>
  );
}

/** Removing an opt-out the recipient asked for by keyword needs their consent: the question says so. */
function removalQuestion(optOut: Schemas['OptOut']): string {
  return optOut.source === 'keyword'
    ? `${optOut.number} opted out by replying ${optOut.keyword ?? 'a stop keyword'}. Remove it only with the recipient's consent: they can also reply START.`
    : `Messages to ${optOut.number} will be sent again.`;
}

export function OptOuts() {
  const can = useCan();
  const queryClient = useQueryClient();
  const { params, page, setPage, setFilters } = useListParams();
  const number = params.get('number') || undefined;
  const optOuts = useQuery({
    queryKey: ['opt-outs', page, number],
    queryFn: () => unwrap(api.GET('/opt-outs', { params: { query: { page, limit: 25, number } } })),
  });
  const remove = useMutation({
    mutationFn: (value: string) => unwrap(api.DELETE('/opt-outs/{number}', { params: { path: { number: value } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['opt-outs'] }),
  });

  function filter(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setFilters({ number: String(new FormData(event.currentTarget).get('number') ?? '').trim() });
  }

  return (
    <>
      <h1>Opt-outs</h1>
      {can('sms:send') && <AddOptOuts />}
      <form className="filters" onSubmit={filter} aria-label="Find an opt-out">
        <label>
          Number
          <input name="number" type="tel" placeholder="+447400123456" defaultValue={number ?? ''} />
        </label>
        <div className="filter-actions">
          <button type="submit">Find</button>
        </div>
      </form>
      <ErrorNotice error={optOuts.error ?? remove.error} />
      {optOuts.data && optOuts.data.data.length === 0 && (
        <EmptyState>No opt-out{number ? ' for this number' : ''} — recipients who reply STOP, and numbers you add, appear here.</EmptyState>
      )}
      {optOuts.data && optOuts.data.data.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Source</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Since</th>
                  {can('sms:send') && <th scope="col">Action</th>}
                </tr>
              </thead>
              <tbody>
                {optOuts.data.data.map((optOut) => (
                  <tr key={optOut.number}>
                    <td>{optOut.number}</td>
                    <td>
                      {optOut.source}
                      {optOut.keyword && ` (${optOut.keyword})`}
                    </td>
                    <td>{optOut.reason ?? '—'}</td>
                    <td>{formatTime(optOut.created_at)}</td>
                    {can('sms:send') && (
                      <td>
                        <Confirm
                          label={`Remove ${optOut.number}`}
                          question={removalQuestion(optOut)}
                          confirmLabel="Remove"
                          onConfirm={() => remove.mutate(optOut.number)}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={optOuts.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
