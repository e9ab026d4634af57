import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/constraints.ts';
import { findSender, insertSender, moveSender, type SenderRow, type SenderStatus, type SenderType } from '../db/senders.ts';
import { conflict, invalidRequest, notFound } from './errors.ts';
import { newId } from './ids.ts';

const ALPHANUMERIC_MAX = 11;

/**
 * The type a sender ID has when the caller does not say: any letter makes it alphanumeric,
 * 3 to 8 digits a short code, `+` and 7 to 15 digits an E.164 long code, other digits numeric.
 */
export function inferSenderType(senderId: string): SenderType {
  if (/[A-Za-z]/.test(senderId)) return 'alphanumeric';
  if (/^\d{3,8}$/.test(senderId)) return 'short_code';
  if (/^\+\d{7,15}$/.test(senderId)) return 'long_code';
  return 'numeric';
}

/** Checks a sender ID against its type; answers the reason it cannot be used, or null. */
export function senderIdProblem(senderId: string, type: SenderType): string | null {
  switch (type) {
    case 'alphanumeric':
      if (!/^[A-Za-z0-9 ]+$/.test(senderId) || !/[A-Za-z]/.test(senderId))
        return 'An alphanumeric sender ID has letters, digits and spaces, with at least one letter.';
      if (senderId.length > ALPHANUMERIC_MAX) return `An alphanumeric sender ID has at most ${ALPHANUMERIC_MAX} characters.`;
      return null;
    case 'short_code':
      return /^\d{3,8}$/.test(senderId) ? null : 'A short code has 3 to 8 digits.';
    case 'long_code':
      return /^\+?\d{7,15}$/.test(senderId) ? null : 'A long code is a phone number of 7 to 15 digits, optionally with a leading +.';
    case 'numeric':
      return /^\+?\d{1,16}$/.test(senderId) ? null : 'A numeric sender ID has only digits, optionally with a leading +.';
  }
}

export async function registerSender(
  db: Knex,
  accountId: string,
  request: { sender_id: string; type?: SenderType; country_code?: string | null },
): Promise<SenderRow> {
  const type = request.type ?? inferSenderType(request.sender_id);
  const problem = senderIdProblem(request.sender_id, type);
  if (problem) throw invalidRequest('sender_id', problem);
  const sender = await insertSender(db, {
    id: newId('snd'),
    account_id: accountId,
    sender_id: request.sender_id,
    type,
    country_code: request.country_code ?? null,
  });
  if (!sender) throw invalidRequest('sender_id', `The sender ID '${request.sender_id}' is already registered on this account.`, 'duplicate_sender');
  return sender;
}

/** The operator's review of a sender: which states each decision may start from. */
const TRANSITIONS: Record<'approve' | 'reject' | 'suspend', { from: SenderStatus[]; to: SenderStatus }> = {
  approve: { from: ['pending', 'suspended'], to: 'approved' },
  reject: { from: ['pending'], to: 'rejected' },
  suspend: { from: ['approved'], to: 'suspended' },
};

/**
 * Moves the sender, refusing to approve a number that another account holds: its replies could
 * belong to only one of them (the schema's senders_inbound_number_key allows one approved holder).
 */
async function move(db: Knex, id: string, from: SenderStatus[], to: SenderStatus): Promise<SenderRow | undefined> {
  try {
    return await moveSender(db, id, from, to);
  } catch (error) {
    if (!isUniqueViolation(error, 'senders_inbound_number_key')) throw error;
    throw conflict('This number is already approved for another account: a number receives replies for one account at a time.', 'conflict', 'id');
  }
}

/** Applies a review decision; repeating a decision on a sender already in its state changes nothing. */
export async function reviewSender(db: Knex, id: string, decision: keyof typeof TRANSITIONS): Promise<SenderRow> {
  const { from, to } = TRANSITIONS[decision];
  const moved = await move(db, id, from, to);
  if (moved) return moved;
  const current = await findSender(db, id);
  if (!current) throw notFound('sender', id);
  if (current.status === to) return current;
  throw conflict(`A ${current.status} sender cannot be moved to ${to}.`, 'invalid_state_transition');
}
