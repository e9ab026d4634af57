import { expect } from 'chai';
import { SEND_JOB_MESSAGES, sendJobs } from '../../db/send-groups.ts';

describe('the send jobs of accepted messages', () => {
  it('carry the messages of one first route and one account each, naming the account, at most SEND_JOB_MESSAGES at a time', () => {
    const messages = [
      ...Array.from({ length: SEND_JOB_MESSAGES + 1 }, (_, i) => ({ id: `msg_a${i}`, accountId: 'acct_a', firstRouteId: 1, sendAt: null })),
      { id: 'msg_b0', accountId: 'acct_b', firstRouteId: 1, sendAt: null },
      { id: 'msg_a_other_route', accountId: 'acct_a', firstRouteId: 2, sendAt: null },
    ];
    const jobs = sendJobs(messages).map(({ data, options }) => ({ ids: data.message_ids, account: data.account_id, group: options.group?.id }));
    expect(jobs).to.deep.equal([
      { ids: messages.slice(0, SEND_JOB_MESSAGES).map(({ id }) => id), account: 'acct_a', group: 'route-1' },
      { ids: [`msg_a${SEND_JOB_MESSAGES}`], account: 'acct_a', group: 'route-1' },
      { ids: ['msg_b0'], account: 'acct_b', group: 'route-1' },
      { ids: ['msg_a_other_route'], account: 'acct_a', group: 'route-2' },
    ]);
  });

  it('keep messages due at different times apart, each job starting at its time', () => {
    const at = new Date('2031-05-20T09:00:00Z');
    const messages = [
      { id: 'msg_now', accountId: 'acct_a', firstRouteId: 1, sendAt: null },
      { id: 'msg_at_9', accountId: 'acct_a', firstRouteId: 1, sendAt: at },
      { id: 'msg_at_9_too', accountId: 'acct_a', firstRouteId: 1, sendAt: new Date(at) },
    ];
    const jobs = sendJobs(messages).map(({ data, options }) => ({ ids: data.message_ids, startAfter: options.startAfter }));
    expect(jobs).to.deep.equal([
      { ids: ['msg_now'], startAfter: undefined },
      { ids: ['msg_at_9', 'msg_at_9_too'], startAfter: at },
    ]);
  });
});
