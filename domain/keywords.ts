import type { Knex } from 'knex';
import {
  findKeywordSettings,
  lockKeywordSettings,
  upsertKeywordSettings,
  type KeywordSettingsChange,
  type KeywordSettingsRow,
} from '../db/keyword-settings.ts';
import { invalidRequest } from './errors.ts';

export type KeywordKind = 'opt_out' | 'opt_in' | 'help';
export const KEYWORD_KINDS: KeywordKind[] = ['opt_out', 'opt_in', 'help'];

/** The keywords every account answers to (CTIA's list, plus the French-Canadian ARRET). */
export const DEFAULT_KEYWORDS: Record<KeywordKind, readonly string[]> = {
  opt_out: ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT', 'OPT-OUT', 'REMOVE', 'ARRET'],
  opt_in: ['START', 'UNSTOP', 'YES'],
  help: ['HELP', 'INFO'],
};

/** Short on purpose: each confirmation is a billed message, and one GSM-7 segment is the cheapest. */
export const DEFAULT_REPLIES: Record<KeywordKind, string> = {
  opt_out: 'You are unsubscribed and will receive no more messages. Reply START to resubscribe.',
  opt_in: 'You are resubscribed and will receive messages again. Reply STOP to unsubscribe.',
  help: 'Reply STOP to unsubscribe or START to resubscribe. Msg&data rates may apply.',
};

/** An account's keyword settings: its own keywords (normalized, added to the defaults) and its texts (null: the default). */
export interface KeywordSettings {
  keywords: Record<KeywordKind, string[]>;
  replies: Record<KeywordKind, string | null>;
  updatedAt: Date | null;
}

export const MAX_CUSTOM_KEYWORDS = 20;

/**
 * The form a message and a keyword are compared in: trimmed, upper case, accents dropped (ARRÊT
 * is ARRET), trailing punctuation and spaces ignored. Inner characters stay: OPT-OUT is not OPTOUT.
 */
const withoutAccents = (text: string): string => text.normalize('NFD').replace(/\p{M}/gu, '');

export function normalizeKeyword(text: string): string {
  return withoutAccents(text)
    .toUpperCase()
    .replace(/[\s\p{P}\p{S}]+$/u, '')
    .trim();
}

const settingsFrom = (row: KeywordSettingsRow | undefined): KeywordSettings => ({
  keywords: { opt_out: row?.opt_out_keywords ?? [], opt_in: row?.opt_in_keywords ?? [], help: row?.help_keywords ?? [] },
  replies: { opt_out: row?.opt_out_reply ?? null, opt_in: row?.opt_in_reply ?? null, help: row?.help_reply ?? null },
  updatedAt: row?.updated_at ?? null,
});

export async function keywordSettingsOf(db: Knex | Knex.Transaction, accountId: string): Promise<KeywordSettings> {
  return settingsFrom(await findKeywordSettings(db, accountId));
}

/** The whole message, trimmed, case-insensitive, trailing punctuation ignored, against the defaults plus the account's own. */
export function matchKeyword(settings: KeywordSettings, body: string): { kind: KeywordKind; keyword: string } | null {
  const text = normalizeKeyword(body);
  if (text === '') return null;
  for (const kind of KEYWORD_KINDS) {
    if (DEFAULT_KEYWORDS[kind].includes(text) || settings.keywords[kind].includes(text)) return { kind, keyword: text };
  }
  return null;
}

export function replyText(settings: KeywordSettings, kind: KeywordKind): string {
  return settings.replies[kind] ?? DEFAULT_REPLIES[kind];
}

export interface KeywordListChange {
  keywords?: string[];
  reply?: string | null;
}

export type KeywordSettingsRequest = Partial<Record<KeywordKind, KeywordListChange>>;

/**
 * Changes an account's keywords and texts: a list given replaces the account's own list of that
 * kind; a reply given replaces its text (null: back to the default). A keyword may belong to one
 * list only, defaults included, and must be something a reply can match.
 */
export async function updateKeywordSettings(db: Knex, accountId: string, request: KeywordSettingsRequest): Promise<KeywordSettings> {
  return db.transaction(async (trx) => {
    await lockKeywordSettings(trx, accountId);
    return changeSettings(trx, accountId, (await keywordSettingsOf(trx, accountId)).keywords, request);
  });
}

async function changeSettings(
  trx: Knex.Transaction,
  accountId: string,
  current: KeywordSettings['keywords'],
  request: KeywordSettingsRequest,
): Promise<KeywordSettings> {
  const lists = { ...current };
  for (const kind of KEYWORD_KINDS) {
    const given = request[kind]?.keywords;
    if (given === undefined) continue;
    const normalized = given.map((keyword) => {
      const form = normalizeKeyword(keyword);
      // A keyword that normalizing shortens (trailing punctuation) could never be matched as written.
      if (form === '' || /\s/u.test(form) || form.length !== withoutAccents(keyword.trim()).length) {
        throw invalidRequest(`${kind}.keywords`, `'${keyword}' cannot be a keyword: a keyword is one word that does not end in punctuation.`);
      }
      return form;
    });
    lists[kind] = [...new Set(normalized)];
  }
  for (const kind of KEYWORD_KINDS) {
    for (const keyword of lists[kind]) {
      const other = KEYWORD_KINDS.find(
        (otherKind) => otherKind !== kind && (DEFAULT_KEYWORDS[otherKind].includes(keyword) || lists[otherKind].includes(keyword)),
      );
      if (other)
        throw invalidRequest(`${kind}.keywords`, `${keyword} is already a keyword of the ${other} list; a keyword belongs to one list.`, 'keyword_conflict');
    }
  }
  const change: KeywordSettingsChange = {};
  for (const kind of KEYWORD_KINDS) {
    const given = request[kind];
    if (given?.keywords !== undefined) change[`${kind}_keywords`] = lists[kind];
    if (given?.reply !== undefined) change[`${kind}_reply`] = given.reply;
  }
  return settingsFrom(await upsertKeywordSettings(trx, accountId, change));
}
