import { listAllMessages } from '../../db/messages.ts';
import { messageStory } from '../../domain/message-story.ts';
import { toAdminMessage, toMessageStory, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminListMessages: AdminHandler<'adminListMessages'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const filter = {
    status: query.status,
    to: query.to,
    createdAfter: query.created_after,
    createdBefore: query.created_before,
    accountId: query.account_id,
    routeId: query.route_id,
    errorCode: query.error_code,
    providerMessageId: query.provider_message_id,
  };
  const { rows, total } = await listAllMessages(services.db, filter, { page, limit });
  return { status: 200, data: rows.map(toAdminMessage), pagination: toPagination(page, limit, total) };
};

export const adminGetMessageStory: AdminHandler<'adminGetMessageStory'> = async ({ params }, { services }) => ({
  status: 200,
  data: toMessageStory(await messageStory(services.db, params.id)),
});
