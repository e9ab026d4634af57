import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { LedgerTable } from '../../components/LedgerTable';
import { formatMoney, formatTime } from '../../lib/format';
import { useRole } from '../../lib/session-context';

/** Credits the account (admin): an amount in its currency, with the description its ledger shows. */
function Credit({ id, currency }: { id: string; currency: string }) {
  const queryClient = useQueryClient();
  const [amount, setAmount] = useState('');
  const [description, setDescription] = useState('');
  const credit = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/admin/accounts/{id}/credit', { params: { path: { id } }, body: { amount: Number(amount), description: description.trim() || null } })),
    onSuccess: () => {
      setAmount('');
      setDescription('');
      void queryClient.invalidateQueries({ queryKey: ['admin-account', id] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    credit.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="credit-account">
      <h2 id="credit-account">Credit</h2>
      <div className="inline-form">
        <label>
          Amount ({currency})
          <input required type="number" min="0.0001" step="0.0001" value={amount} onChange={(event) => setAmount(event.target.value)} />
        </label>
        <label>
          Description
          <input maxLength={255} value={description} onChange={(event) => setDescription(event.target.value)} />
        </label>
        <button type="submit" disabled={credit.isPending}>
          Credit
        </button>
      </div>
      {credit.isSuccess && <p role="status">Credited: the balance is now {formatMoney(credit.data.data.balance, credit.data.data.currency)}.</p>}
      <ErrorNotice error={credit.error} />
    </form>
  );
}

/** Suspends an active account or reactivates a suspended one (admin), with the reason the audit log keeps. */
function StatusChange({ id, status }: { id: string; status: string }) {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const suspending = status === 'active';
  const change = useMutation({
    mutationFn: () =>
      unwrap(
        suspending
          ? api.POST('/admin/accounts/{id}/suspend', { params: { path: { id } }, body: { reason: reason.trim() } })
          : api.POST('/admin/accounts/{id}/reactivate', { params: { path: { id } }, body: { reason: reason.trim() } }),
      ),
    onSuccess: (body) => {
      setReason('');
      queryClient.setQueryData(['admin-account', id], body);
      void queryClient.invalidateQueries({ queryKey: ['admin-accounts'] });
    },
  });
  if (status === 'closed') return null;
  function submit(event: FormEvent) {
    event.preventDefault();
    change.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="account-status">
      <h2 id="account-status">{suspending ? 'Suspend' : 'Reactivate'}</h2>
      {suspending && <p className="help">While suspended, every key of the account is refused.</p>}
      <div className="inline-form">
        <label>
          Reason
          <input required maxLength={500} value={reason} onChange={(event) => setReason(event.target.value)} />
        </label>
        <button type="submit" className={suspending ? 'danger' : undefined} disabled={change.isPending}>
          {suspending ? 'Suspend account' : 'Reactivate account'}
        </button>
      </div>
      <ErrorNotice error={change.error} />
    </form>
  );
}

/** Adds a note to the account (support): it is kept in the audit log. */
function Note({ id }: { id: string }) {
  const [text, setText] = useState('');
  const note = useMutation({
    mutationFn: () => unwrap(api.POST('/admin/accounts/{id}/notes', { params: { path: { id } }, body: { text: text.trim() } })),
    onSuccess: () => setText(''),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    note.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="account-note">
      <h2 id="account-note">Note</h2>
      <label>
        Text
        <textarea required maxLength={2000} rows={3} value={text} onChange={(event) => setText(event.target.value)} />
      </label>
      <button type="submit" disabled={note.isPending}>
        Add note
      </button>
      {note.isSuccess && (
        <p role="status">
          Noted: it is in the <Link to={`/operator/audit-log?account_id=${id}`}>audit log</Link>.
        </p>
      )}
      <ErrorNotice error={note.error} />
    </form>
  );
}

/** One account as an operator sees it: its status and balance, its keys, routes and ledger, and what the role may do to it. */
export function AccountDetail() {
  const { id = '' } = useParams();
  const role = useRole();
  const path = { params: { path: { id } } };
  const account = useQuery({ queryKey: ['admin-account', id], queryFn: () => unwrap(api.GET('/admin/accounts/{id}', path)) });
  const keys = useQuery({ queryKey: ['admin-account-keys', id], queryFn: () => unwrap(api.GET('/admin/accounts/{id}/api-keys', path)) });
  const routes = useQuery({ queryKey: ['admin-account-routes', id], queryFn: () => unwrap(api.GET('/admin/accounts/{id}/routes', path)) });
  const ledger = useQuery({
    queryKey: ['admin-account-ledger', id, account.data?.data.balance],
    queryFn: () => unwrap(api.GET('/admin/accounts/{id}/ledger', { params: { path: { id }, query: { limit: 20 } } })),
  });
  const data = account.data?.data;
  return (
    <>
      <p>
        <Link to="/operator/accounts">← Accounts</Link>
      </p>
      <h1>{data?.name ?? 'Account'}</h1>
      <ErrorNotice error={account.error} />
      {data && (
        <>
          <dl className="facts">
            <dt>Id</dt>
            <dd>
              <code>{data.id}</code>
            </dd>
            <dt>Email</dt>
            <dd>{data.email}</dd>
            <dt>Status</dt>
            <dd>
              <span className={`status status-${data.status}`} data-testid="account-status">
                {data.status}
              </span>
            </dd>
            <dt>Balance</dt>
            <dd>{formatMoney(data.balance, data.currency)}</dd>
            <dt>Created</dt>
            <dd>{formatTime(data.created_at)}</dd>
          </dl>
          <p className="actions">
            <Link to={`/operator/messages?account_id=${data.id}`}>Messages</Link>
            <Link to={`/operator/audit-log?account_id=${data.id}`}>Audit log</Link>
          </p>
          {role('admin') && <Credit id={data.id} currency={data.currency} />}
          {role('admin') && <StatusChange id={data.id} status={data.status} />}
          {role('support') && <Note id={data.id} />}
        </>
      )}
      <h2>Keys</h2>
      <ErrorNotice error={keys.error} />
      {keys.data && keys.data.data.data.length === 0 && <EmptyState>No key.</EmptyState>}
      {keys.data && keys.data.data.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.data.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.key_hint}</code>
                  </td>
                  <td className="scope-list">{key.permissions.join(', ')}</td>
                  <td>{key.is_active ? 'active' : 'revoked'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Routes, in failover order</h2>
      <ErrorNotice error={routes.error} />
      {routes.data && routes.data.data.data.length === 0 && <EmptyState>No route assigned: the account cannot send.</EmptyState>}
      {routes.data && routes.data.data.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Priority</th>
                <th scope="col">Route</th>
                <th scope="col">Provider</th>
                <th scope="col">Price a segment</th>
                <th scope="col">Assigned</th>
              </tr>
            </thead>
            <tbody>
              {routes.data.data.data.map((route) => (
                <tr key={route.id}>
                  <td>{route.priority}</td>
                  <td>
                    {route.name} <span className="help">#{route.id}</span>
                    {!route.is_active && ' (inactive)'}
                  </td>
                  <td>{route.provider}</td>
                  <td>{route.price_per_segment}</td>
                  <td>{formatTime(route.assigned_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Ledger</h2>
      <ErrorNotice error={ledger.error} />
      {ledger.data && ledger.data.data.length === 0 && <EmptyState>No balance change yet.</EmptyState>}
      {ledger.data && ledger.data.data.length > 0 && <LedgerTable rows={ledger.data.data} />}
    </>
  );
}
