import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { LedgerTable } from '../components/LedgerTable';
import { Pagination } from '../components/Pagination';
import { formatMoney, formatTime } from '../lib/format';
import { useCan } from '../lib/session-context';
import { useListParams } from '../lib/use-page-param';

type TransactionType = Schemas['BalanceTransaction']['type'];
const TYPES: TransactionType[] = ['credit', 'debit', 'refund', 'adjustment'];

/** The low-balance warning (PATCH /account, scope webhooks:write, as the warning is a webhook event). */
function Threshold({ account }: { account: Schemas['Account'] }) {
  const queryClient = useQueryClient();
  const [value, setValue] = useState(account.low_balance_threshold?.toString() ?? '');
  const update = useMutation({
    mutationFn: () => unwrap(api.PATCH('/account', { body: { low_balance_threshold: value === '' ? null : Number(value) } })),
    onSuccess: (body) => queryClient.setQueryData(['account'], body),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    update.mutate();
  }
  return (
    <form className="inline-form" onSubmit={submit}>
      <label>
        Warn when the balance falls under ({account.currency}; empty for never)
        <input type="number" min={0} step="0.01" value={value} onChange={(event) => setValue(event.target.value)} />
      </label>
      <button type="submit" disabled={update.isPending}>
        Save threshold
      </button>
      {update.isSuccess && <span role="status">Saved.</span>}
      <ErrorNotice error={update.error} />
    </form>
  );
}

export function Balance() {
  const can = useCan();
  const { params, page, setPage, setFilters } = useListParams();
  const type = (params.get('type') as TransactionType | null) ?? undefined;
  const balance = useQuery({ queryKey: ['balance'], queryFn: () => unwrap(api.GET('/balance')) });
  const account = useQuery({ queryKey: ['account'], queryFn: () => unwrap(api.GET('/account')), enabled: can('account:read') });
  const transactions = useQuery({
    queryKey: ['transactions', page, type],
    queryFn: () => unwrap(api.GET('/balance/transactions', { params: { query: { page, limit: 25, type } } })),
  });

  return (
    <>
      <h1>Balance</h1>
      <ErrorNotice error={balance.error} />
      {balance.data && (
        <p className="big-figure" data-testid="balance">
          {formatMoney(balance.data.data.balance, balance.data.data.currency)}
          <span className="help"> as of {formatTime(balance.data.data.as_of)}</span>
        </p>
      )}
      {account.data && can('webhooks:write') && <Threshold key={account.dataUpdatedAt} account={account.data.data} />}
      {account.data && !can('webhooks:write') && (
        <p>
          Low-balance warning:{' '}
          {account.data.data.low_balance_threshold === null || account.data.data.low_balance_threshold === undefined
            ? 'off'
            : `under ${formatMoney(account.data.data.low_balance_threshold, account.data.data.currency)}`}
        </p>
      )}
      <h2>Transactions</h2>
      <label>
        Type{' '}
        <select value={type ?? ''} onChange={(event) => setFilters({ type: event.target.value })}>
          <option value="">Any</option>
          {TYPES.map((value) => (
            <option key={value}>{value}</option>
          ))}
        </select>
      </label>
      <ErrorNotice error={transactions.error} />
      {transactions.data && transactions.data.data.length === 0 && (
        <EmptyState>No transaction yet — credits from your operator and message charges appear here.</EmptyState>
      )}
      {transactions.data && transactions.data.data.length > 0 && (
        <>
          <LedgerTable rows={transactions.data.data} />
          <Pagination pagination={transactions.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
