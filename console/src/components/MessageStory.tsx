import type { ReactNode } from 'react';
import type { Schemas } from '../api/client';
import { formatMoney, formatTime } from '../lib/format';

type Message = Schemas['Message'];
export type StoryEntry = Schemas['MessageStory']['entries'][number];
type WebhookAttempt = Schemas['WebhookAttempt'];

function describe(entry: StoryEntry): string {
  switch (entry.kind) {
    case 'status':
      return `Status ${entry.status}`;
    case 'attempt':
      return `Attempt ${entry.attempt} on route ${entry.route_id}: ${entry.outcome}${entry.error_code ? ` (${entry.error_code}: ${entry.error_message ?? ''})` : ''}`;
    case 'event':
      return `Event ${entry.type}`;
    case 'webhook_delivery': {
      const attempt = entry.webhook_attempt;
      return `Webhook delivery ${attempt.attempt} to ${attempt.endpoint_id}: ${attempt.succeeded ? 'succeeded' : 'failed'} (${attempt.status_code ?? attempt.error ?? 'no answer'})`;
    }
    case 'ledger':
      return `Balance ${entry.transaction.type} ${formatMoney(entry.transaction.amount, entry.transaction.currency)}`;
  }
}

/** What a message is: the facts its detail and an operator's story of it both show. */
export function MessageFacts({ message, children }: { message: Message; children?: ReactNode }) {
  return (
    <dl className="facts">
      <dt>Id</dt>
      <dd>
        <code>{message.id}</code>
      </dd>
      <dt>Status</dt>
      <dd>
        <span className={`status status-${message.status}`} data-testid="message-status">
          {message.status}
        </span>
        {message.error && ` — ${message.error.code}: ${message.error.message}`}
      </dd>
      <dt>To</dt>
      <dd>{message.to}</dd>
      <dt>From</dt>
      <dd>{message.from}</dd>
      <dt>Body</dt>
      <dd className="body-text">{message.body}</dd>
      <dt>Encoding</dt>
      <dd>
        {message.encoding}, {message.segments} segment{message.segments === 1 ? '' : 's'}
        {message.smart_encoded ? ' (smart-encoded)' : ''}
      </dd>
      <dt>Cost</dt>
      <dd>{formatMoney(message.cost, message.currency)}</dd>
      <dt>Route</dt>
      <dd>{message.route_id ?? '—'}</dd>
      {message.send_at && (
        <>
          <dt>Scheduled for</dt>
          <dd>{formatTime(message.send_at)}</dd>
        </>
      )}
      {message.reference && (
        <>
          <dt>Reference</dt>
          <dd>{message.reference}</dd>
        </>
      )}
      {children}
    </dl>
  );
}

/**
 * A message's story in time order. `resend`, when given, is offered beside each webhook delivery
 * (a customer's view leaves it out; an operator's passes it when the role may resend).
 */
export function Timeline({ entries, resend }: { entries: StoryEntry[]; resend?: { onResend: (attempt: WebhookAttempt) => void; pending: boolean } }) {
  return (
    <ol className="timeline" aria-label="Timeline">
      {entries.map((entry, index) => (
        <li key={index}>
          <time dateTime={entry.at}>{formatTime(entry.at)}</time> <span>{describe(entry)}</span>
          {resend && entry.kind === 'webhook_delivery' && (
            <>
              {' '}
              <button type="button" onClick={() => resend.onResend(entry.webhook_attempt)} disabled={resend.pending}>
                Resend
              </button>
            </>
          )}
        </li>
      ))}
    </ol>
  );
}
