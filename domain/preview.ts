import type { Knex } from 'knex';
import { findAccount } from '../db/accounts.ts';
import type { RouteRow } from '../db/routes.ts';
import { ucs2Characters, type SegmentPlan } from './encoding.ts';
import type { BodyToSend } from './smart-encoding.ts';
import { ApiError, insufficientBalance } from './errors.ts';
import { add, compare } from './money.ts';
import { checkBatch, type Checked, type SendItem } from './send-checks.ts';
import { sendLimitsRefusal } from './send-limits.ts';
import type { BatchPolicy } from './sending.ts';

/** What sending one item would do: its body's plan, route, cost and send time, or its refusal. */
export interface PreviewItem {
  to: string;
  body: string;
  plan: SegmentPlan | undefined;
  smartEncoded: boolean;
  ucs2Characters: { character: string; position: number }[];
  route: RouteRow | null;
  cost: string | null;
  sendAt: Date | null;
  refusal: ApiError | null;
}

/**
 * What accepting `items` under `policy` would answer, item by item, read in a read-only
 * transaction: the same checks as acceptance (send-checks.ts), then the key's limits and the
 * balance read without counting or charging anything. A key's limit refuses every item of its
 * key, as it refuses the request; the balance refuses per `policy`.
 */
export async function previewBatch(db: Knex, items: SendItem[], policy: BatchPolicy, now: Date): Promise<PreviewItem[]> {
  return db.transaction(
    async (trx) => {
      const { checked, refused } = await checkBatch(trx, items, now);
      const answers: PreviewItem[] = items.map((item) => ({
        to: item.request.to,
        body: item.request.body,
        plan: undefined,
        smartEncoded: false,
        ucs2Characters: ucs2Characters(item.request.body),
        route: null,
        cost: null,
        sendAt: null,
        refusal: null,
      }));
      for (const { index, refusal, planned } of refused) Object.assign(answers[index], planView(planned), { refusal });
      for (const { index, planned, route, cost, sendAt } of checked) Object.assign(answers[index], planView(planned), { route, cost, sendAt });

      let passing = checked;
      for (const [, ofKey] of Map.groupBy(passing, ({ item }) => item.sender.apiKey?.id ?? '')) {
        const key = ofKey[0].item.sender.apiKey;
        const refusal = key && (await sendLimitsRefusal(trx, key, ofKey.length, now));
        if (refusal) for (const { index } of ofKey) answers[index].refusal = refusal;
      }
      passing = passing.filter(({ index }) => answers[index].refusal === null);
      for (const [accountId, ofAccount] of Map.groupBy(passing, ({ item }) => item.sender.account.id)) {
        const account = ofAccount[0].item.sender.account;
        const balance = (await findAccount(trx, accountId))?.balance ?? '0';
        for (const [index, refusal] of balanceRefusals(ofAccount, balance, account.currency, policy)) answers[index].refusal = refusal;
      }
      return answers;
    },
    { readOnly: true },
  );
}

/** The body as it would be sent, its plan, and the characters that still force UCS-2 in it. */
const planView = (planned: BodyToSend | undefined) =>
  planned && { body: planned.body, smartEncoded: planned.smartEncoded, plan: planned.plan, ucs2Characters: ucs2Characters(planned.body) };

/** The items of one account the balance would refuse: all of them when their total is not covered (`whole`), or those past it in order. */
function balanceRefusals(ofAccount: Checked[], balance: string, currency: string, policy: BatchPolicy): [number, ApiError][] {
  const total = ofAccount.reduce((sum, { cost }) => add(sum, cost), '0.0000');
  if (policy === 'whole') return compare(total, balance) > 0 ? ofAccount.map(({ index }) => [index, insufficientBalance(total, balance, currency)]) : [];
  let spent = '0.0000';
  return ofAccount.flatMap(({ index, cost }): [number, ApiError][] => {
    if (compare(add(spent, cost), balance) > 0) return [[index, insufficientBalance(cost, balance, currency)]];
    spent = add(spent, cost);
    return [];
  });
}
