import type { Schemas } from '../api/client';
import { formatMoney, formatTime } from '../lib/format';

/** An account's balance changes, newest first: the customer's Balance view and the operator's account page show the same rows. */
export function LedgerTable({ rows }: { rows: Schemas['BalanceTransaction'][] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Type</th>
            <th scope="col">Amount</th>
            <th scope="col">Balance after</th>
            <th scope="col">Message</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td>{formatTime(row.created_at)}</td>
              <td>{row.type}</td>
              <td>{formatMoney(row.amount, row.currency)}</td>
              <td>{formatMoney(row.balance_after, row.currency)}</td>
              <td>{row.message_id ? <code>{row.message_id}</code> : '—'}</td>
              <td>{row.description ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
