import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { getMessageStory, isUnknownOperation, type StoryEntry } from '../api/coming';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatMoney, formatTime } from '../lib/format';
import { useCan } from '../lib/session-context';

type Message = Schemas['Message'];

/** While the message can still change, it and its story are read again this often. */
const LIVE_REFRESH_MS = 2000;
const isFinal = (message: Message | undefined) => message !== undefined && !['pending', 'sent'].includes(message.status);

/** A server without the story operation: the timeline the message's own times tell. */
function storyFromMessage(message: Message): StoryEntry[] {
  const steps: [string | null, Message['status']][] = [
    [message.created_at, 'pending'],
    [message.sent_at, 'sent'],
    [message.delivered_at, 'delivered'],
    [message.failed_at, message.status === 'undelivered' ? 'undelivered' : 'failed'],
  ];
  return steps.flatMap(([at, status]) => (at ? [{ at, kind: 'status' as const, status }] : []));
}

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

export function MessageDetail() {
  const { id = '' } = useParams();
  const can = useCan();
  const queryClient = useQueryClient();
  const message = useQuery({
    queryKey: ['message', id],
    queryFn: () => unwrap(api.GET('/messages/{id}', { params: { path: { id } } })).then((body) => body.data),
    refetchInterval: (current) => (isFinal(current.state.data) ? false : LIVE_REFRESH_MS),
  });
  const story = useQuery({
    queryKey: ['message-story', id, message.data?.status],
    queryFn: async () => {
      try {
        return (await getMessageStory(id)).entries;
      } catch (error) {
        if (isUnknownOperation(error) && message.data) return storyFromMessage(message.data);
        throw error;
      }
    },
    enabled: message.data !== undefined,
  });
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/messages/{id}/cancel', { params: { path: { id } } })),
    onSuccess: (body) => {
      queryClient.setQueryData(['message', id], body.data);
      void queryClient.invalidateQueries({ queryKey: ['messages'] });
    },
  });

  const data = message.data;
  const cancelable = data?.status === 'pending' && data.send_at !== null && data.send_at !== undefined && can('sms:send');
  return (
    <>
      <p>
        <Link to="/messages">← Messages</Link>
      </p>
      <h1>Message</h1>
      <ErrorNotice error={message.error} />
      {data && (
        <>
          <dl className="facts">
            <dt>Id</dt>
            <dd>
              <code>{data.id}</code>
            </dd>
            <dt>Status</dt>
            <dd>
              <span className={`status status-${data.status}`} data-testid="message-status">
                {data.status}
              </span>
              {data.error && ` — ${data.error.code}: ${data.error.message}`}
            </dd>
            <dt>To</dt>
            <dd>{data.to}</dd>
            <dt>From</dt>
            <dd>{data.from}</dd>
            <dt>Body</dt>
            <dd className="body-text">{data.body}</dd>
            <dt>Encoding</dt>
            <dd>
              {data.encoding}, {data.segments} segment{data.segments === 1 ? '' : 's'}
              {data.smart_encoded ? ' (smart-encoded)' : ''}
            </dd>
            <dt>Cost</dt>
            <dd>{formatMoney(data.cost, data.currency)}</dd>
            <dt>Route</dt>
            <dd>{data.route_id ?? '—'}</dd>
            {data.send_at && (
              <>
                <dt>Scheduled for</dt>
                <dd>{formatTime(data.send_at)}</dd>
              </>
            )}
            {data.reference && (
              <>
                <dt>Reference</dt>
                <dd>{data.reference}</dd>
              </>
            )}
          </dl>
          {cancelable && (
            <p>
              <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
                Cancel this scheduled message
              </button>
            </p>
          )}
          <ErrorNotice error={cancel.error} />
          <h2>Timeline</h2>
          <ErrorNotice error={story.error} />
          {story.data && (
            <ol className="timeline" aria-label="Timeline">
              {story.data.map((entry, index) => (
                <li key={index}>
                  <time dateTime={entry.at}>{formatTime(entry.at)}</time> <span>{describe(entry)}</span>
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </>
  );
}
