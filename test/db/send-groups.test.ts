import { expect } from 'chai';
import { SEND_JOB_MESSAGES, sendJobs } from '../../db/send-groups.ts';

describe('the send jobs of accepted messages', () => {
  it('carry the messages of one first route and one account each, naming the account, at most SEND_JOB_MESSAGES at a time', () => {
    const messages = [
      ...Array.from({ length: SEND_JOB_MESSAGES + 1 }, (_, i) => ({ id: `msg_a${i}`, accountId: 'acct_a', firstRouteId: 1 })),
      { id: 'msg_b0', accountId: 'acct_b', firstRouteId: 1 },
      { id: 'msg_a_other_route', accountId: 'acct_a', firstRouteId: 2 },
    ];
    const jobs = sendJobs(messages).map(({ data, options }) => ({ ids: data.message_ids, account: data.account_id, group: options.group?.id }));
    expect(jobs).to.deep.equal([
      { ids: messages.slice(0, SEND_JOB_MESSAGES).map(({ id }) => id), account: 'acct_a', group: 'route-1' },
      { ids: [`msg_a${SEND_JOB_MESSAGES}`], account: 'acct_a', group: 'route-1' },
      { ids: ['msg_b0'], account: 'acct_b', group: 'route-1' },
      { ids: ['msg_a_other_route'], account: 'acct_a', group: 'route-2' },
    ]);
  });
});
