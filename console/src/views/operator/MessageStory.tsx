import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';
import { MessageFacts, Timeline } from '../../components/MessageStory';
import { useRole } from '../../lib/session-context';

/** Any account's message and its whole story; support may deliver one of its webhook events again. */
export function MessageStory() {
  const { id = '' } = useParams();
  const role = useRole();
  const story = useQuery({
    queryKey: ['admin-message-story', id],
    queryFn: () => unwrap(api.GET('/admin/messages/{id}/story', { params: { path: { id } } })).then((body) => body.data),
  });
  const resend = useMutation({
    mutationFn: ({ endpoint_id, event_id }: { endpoint_id: string; event_id: string }) =>
      unwrap(api.POST('/admin/webhooks/{id}/events/{event_id}/resend', { params: { path: { id: endpoint_id, event_id } } })),
  });
  const message = story.data?.message;
  return (
    <>
      <p>
        <Link to="/operator/messages">← Messages</Link>
      </p>
      <h1>Message</h1>
      <ErrorNotice error={story.error} />
      {message && story.data && (
        <>
          <MessageFacts message={message}>
            <dt>Account</dt>
            <dd>
              <Link to={`/operator/accounts/${message.account_id}`}>
                <code>{message.account_id}</code>
              </Link>
            </dd>
          </MessageFacts>
          <h2>Timeline</h2>
          {resend.isSuccess && <p role="status">Resent: the delivery follows.</p>}
          <ErrorNotice error={resend.error} />
          <Timeline
            entries={story.data.entries}
            resend={role('support') ? { onResend: (attempt) => resend.mutate(attempt), pending: resend.isPending } : undefined}
          />
        </>
      )}
    </>
  );
}
