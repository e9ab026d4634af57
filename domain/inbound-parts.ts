import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  deletePartsCompletedBefore,
  groupsWaitingLongerThan,
  insertPart,
  lockPartGroup,
  markPartsCompleted,
  partsWaitedOut,
  waitingParts,
  type InboundPartRow,
  type PartGroup,
} from '../db/inbound-parts.ts';
import type { JobQueue } from '../db/queues.ts';
import type { InboundDelivery } from '../providers/types.ts';
import { planSegments } from './encoding.ts';
import { receiveInbound, recordInbound, type InboundInput, type InboundLog } from './inbound.ts';

/**
 * How long parts are kept after their message was stored: an SMSC that never got our answer to
 * a part delivers it again, and it must be recognised as a repeat, not start a message anew.
 */
const KEEP_STORED_PARTS_SECONDS = 3600;

/** What became of a delivery: stored as (or completing) a message, a repeat, or a part that waits for its siblings. */
export type InboundDeliveryOutcome = 'stored' | 'repeat' | 'waiting';

/**
 * Stores what a provider received on a route. A whole message is stored at once; a part of a
 * concatenated message is stored on its own, and the message is stored, its parts joined in
 * sequence order, in the transaction that stores the last part to arrive, whatever the order.
 * Resolves once committed, so that the provider may acknowledge; rejects otherwise.
 */
export async function receiveInboundDelivery(
  db: Knex,
  jobs: JobQueue,
  routeId: number,
  delivery: InboundDelivery,
  log?: InboundLog,
): Promise<InboundDeliveryOutcome> {
  const { concatenation } = delivery;
  if (!concatenation) {
    const input: InboundInput = {
      routeId,
      // SMPP gives an inbound message no id: a repeat of a message whose answer was lost is
      // indistinguishable from the handset sending the same text again, so each is its own.
      providerMessageId: delivery.providerMessageId ?? `unidentified:${randomUUID()}`,
      from: delivery.from,
      to: delivery.to,
      body: delivery.body,
      encoding: delivery.encoding,
      // As many parts as the text takes: a provider that joined a concatenated message says no more.
      segments: planSegments(delivery.body).segments,
      complete: true,
      receivedAt: delivery.receivedAt ?? new Date(),
    };
    return (await receiveInbound(db, jobs, input, log)) ? 'stored' : 'repeat';
  }
  const group: PartGroup = { route_id: routeId, from: delivery.from, to: delivery.to, reference: concatenation.reference, total: concatenation.total };
  return db.transaction(async (trx) => {
    await lockPartGroup(trx, group);
    const part = {
      ...group,
      sequence: concatenation.sequence,
      body: delivery.body,
      encoding: delivery.encoding,
      received_at: delivery.receivedAt ?? new Date(),
    };
    if (!(await insertPart(trx, part))) return 'repeat';
    const parts = await waitingParts(trx, group);
    if (parts.length < group.total) return 'waiting';
    await storeParts(trx, jobs, parts, true, log);
    return 'stored';
  });
}

/**
 * Stores, marked incomplete, every message whose parts have waited longer than `timeoutSeconds`
 * for their siblings, and forgets parts stored long enough ago. Returns how many messages it stored.
 */
export async function storeWaitedOutParts(db: Knex, jobs: JobQueue, timeoutSeconds: number): Promise<number> {
  let stored = 0;
  for (const group of await groupsWaitingLongerThan(db, timeoutSeconds)) {
    // Under the group's lock, the parts read again: the last one may have arrived meanwhile.
    const storedOne = await db.transaction(async (trx) => {
      await lockPartGroup(trx, group);
      const parts = await partsWaitedOut(trx, group, timeoutSeconds);
      if (parts.length === 0) return false;
      // Never a keyword (recordInbound acts on none in an incomplete message), so never a reply to log.
      await storeParts(trx, jobs, parts, false);
      return true;
    });
    if (storedOne) stored++;
  }
  await deletePartsCompletedBefore(db, Math.max(KEEP_STORED_PARTS_SECONDS, timeoutSeconds));
  return stored;
}

/** One message from a group's parts (given by sequence), in the caller's transaction. */
async function storeParts(trx: Knex.Transaction, jobs: JobQueue, parts: InboundPartRow[], complete: boolean, log?: InboundLog): Promise<void> {
  const first = parts[0];
  await recordInbound(
    trx,
    jobs,
    {
      routeId: first.route_id,
      // Part ids are never reused, so the first one names this message among every other.
      providerMessageId: `parts:${first.reference}:${first.total}:${Math.min(...parts.map((part) => part.id))}`,
      from: first.from,
      to: first.to,
      body: parts.map((part) => part.body).join(''),
      encoding: widestEncoding(parts.map((part) => part.encoding)),
      segments: parts.length,
      complete,
      receivedAt: new Date(Math.min(...parts.map((part) => part.received_at.getTime()))),
    },
    log,
  );
  await markPartsCompleted(
    trx,
    parts.map((part) => part.id),
  );
}

/** Parts may come in different alphabets; the message is said to be in the widest of them. */
function widestEncoding(encodings: InboundPartRow['encoding'][]): InboundPartRow['encoding'] {
  if (encodings.includes('UCS-2')) return 'UCS-2';
  return encodings.includes('Latin-1') ? 'Latin-1' : 'GSM-7';
}
