import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { MessageFacts, Timeline } from '../components/MessageStory';
import { useCan } from '../lib/session-context';

type Message = Schemas['Message'];

/** While the message can still change, it and its story are read again this often. */
const LIVE_REFRESH_MS = 2000;
const isFinal = (message: Message | undefined) => message !== undefined && !['pending', 'sent'].includes(message.status);

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
    queryFn: () => unwrap(api.GET('/messages/{id}/story', { params: { path: { id } } })).then((body) => body.data.entries),
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
          <MessageFacts message={data} />
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
          {story.data && <Timeline entries={story.data} />}
        </>
      )}
    </>
  );
}
