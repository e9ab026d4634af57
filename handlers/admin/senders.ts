import { reviewSender } from '../../domain/senders.ts';
import { toSender } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminApproveSender: AdminHandler<'adminApproveSender'> = async ({ params }, { services }) => ({
  status: 200,
  data: toSender(await reviewSender(services.db, params.id, 'approve')),
});

export const adminRejectSender: AdminHandler<'adminRejectSender'> = async ({ params }, { services }) => ({
  status: 200,
  data: toSender(await reviewSender(services.db, params.id, 'reject')),
});

export const adminSuspendSender: AdminHandler<'adminSuspendSender'> = async ({ params }, { services }) => ({
  status: 200,
  data: toSender(await reviewSender(services.db, params.id, 'suspend')),
});
