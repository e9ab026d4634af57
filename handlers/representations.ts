import type { AccountRow } from '../db/accounts.ts';
import type { ApiKeyRow } from '../db/api-keys.ts';
import type { AuditRow } from '../db/audit-log.ts';
import type { BlocklistRow } from '../db/blocklist.ts';
import type { EventRow } from '../db/events.ts';
import type { InboundMessageRow } from '../db/inbound-messages.ts';
import type { LedgerEntryRow } from '../db/ledger.ts';
import type { ListedOperator } from '../db/operators.ts';
import type { MessageRow } from '../db/messages.ts';
import type { OptOutRow } from '../db/opt-outs.ts';
import type { AssignmentRow, RouteRow } from '../db/routes.ts';
import type { AttemptRow, EndpointRow } from '../db/webhooks.ts';
import type { SenderRow } from '../db/senders.ts';
import { isKeyActive } from '../domain/api-keys.ts';
import { inboundMessageView } from '../domain/inbound-view.ts';
import { DEFAULT_KEYWORDS, replyText, type KeywordKind, type KeywordSettings } from '../domain/keywords.ts';
import { messageView } from '../domain/message-view.ts';
import type { MessageStory } from '../domain/message-story.ts';
import { add, toAmount } from '../domain/money.ts';
import { errorView } from '../domain/errors.ts';
import type { PreviewItem } from '../domain/preview.ts';
import { optOutView } from '../domain/opt-outs.ts';
import type { Scope } from '../domain/scopes.ts';
import type { Stats, StatsFigures } from '../domain/stats.ts';
import type { Usage } from '../domain/usage.ts';
import type { Resend } from '../domain/webhooks.ts';
import type { Schemas } from './types.ts';

/** How stored rows are shown to API callers: one function per resource, nothing else. */

const iso = (date: Date): string => date.toISOString();
const isoOrNull = (date: Date | null): string | null => (date === null ? null : date.toISOString());

export const toAccount = (row: AccountRow): Schemas['Account'] => ({
  id: row.id,
  object: 'account',
  email: row.email,
  name: row.name,
  company_name: row.company_name,
  country: row.country,
  status: row.status,
  kyc_verified: row.kyc_verified,
  balance: toAmount(row.balance),
  currency: row.currency,
  low_balance_threshold: row.low_balance_threshold == null ? null : toAmount(row.low_balance_threshold),
  smart_encoding: row.smart_encoding,
  send_window: row.send_window,
  created_at: iso(row.created_at),
});

export const toBalance = (row: Pick<AccountRow, 'balance' | 'currency'>, asOf = new Date()): Schemas['Balance'] => ({
  object: 'balance',
  balance: toAmount(row.balance),
  currency: row.currency,
  as_of: iso(asOf),
});

export const toUsage = (usage: Usage, currency: string): Schemas['Usage'] => ({
  object: 'usage',
  period: usage.period,
  starts_at: iso(usage.startsAt),
  ends_at: iso(usage.endsAt),
  currency,
  totals: { messages: usage.messages, cost: toAmount(usage.cost) },
  by_status: usage.byStatus,
});

export const toSender = (row: SenderRow): Schemas['Sender'] => ({
  id: row.id,
  object: 'sender',
  sender_id: row.sender_id,
  type: row.type,
  country_code: row.country_code,
  status: row.status,
  approved_at: isoOrNull(row.approved_at),
  created_at: iso(row.created_at),
});

export const toApiKey = (row: ApiKeyRow, lastUsedAt: Date | null = row.last_used_at): Schemas['ApiKey'] => ({
  id: row.id,
  object: 'api_key',
  name: row.name,
  key_hint: row.key_hint,
  is_active: isKeyActive(row),
  permissions: row.permissions as Scope[],
  rate_limit: row.rate_limit,
  daily_limit: row.daily_limit,
  monthly_limit: row.monthly_limit,
  allowed_ips: row.allowed_ips,
  last_used_at: isoOrNull(lastUsedAt),
  expires_at: isoOrNull(row.expires_at),
  created_at: iso(row.created_at),
});

export const PLAIN_KEY_NOTICE = 'Store this key somewhere safe now: it is shown only once and cannot be retrieved later.';

export const toApiKeyWithSecret = (row: ApiKeyRow, plainKey: string): Schemas['ApiKeyWithSecret'] => ({
  ...toApiKey(row),
  plain_key: plainKey,
  plain_key_notice: PLAIN_KEY_NOTICE,
});

export const toMessage = (row: MessageRow): Schemas['Message'] => messageView(row);

export const toMessagePreview = (previews: PreviewItem[], currency: string): Schemas['MessagePreview'] => {
  const sendable = previews.filter(({ refusal }) => refusal === null);
  return {
    object: 'message_preview',
    total: previews.length,
    sendable: sendable.length,
    refused: previews.length - sendable.length,
    cost: toAmount(sendable.reduce((sum, { cost }) => add(sum, cost ?? '0'), '0.0000')),
    currency,
    recipients: previews.map((preview) => ({
      to: preview.to,
      body: preview.body,
      smart_encoded: preview.smartEncoded,
      encoding: preview.plan?.encoding ?? null,
      segments: preview.plan?.segments ?? null,
      ucs2_characters: preview.ucs2Characters,
      route_id: preview.route?.id ?? null,
      price_per_segment: preview.route ? toAmount(preview.route.price_per_segment) : null,
      cost: preview.cost === null ? null : toAmount(preview.cost),
      send_at: preview.sendAt && iso(preview.sendAt),
      refusal: preview.refusal && { status: preview.refusal.status, error: errorView(preview.refusal) },
    })),
  };
};

export const toInboundMessage = (row: InboundMessageRow): Schemas['InboundMessage'] => inboundMessageView(row);

export const toAdminInboundMessage = (row: InboundMessageRow): Schemas['AdminInboundMessage'] => ({ ...inboundMessageView(row), account_id: row.account_id });

export const toPagination = (page: number, limit: number, total: number): Schemas['Pagination'] => {
  const pages = Math.ceil(total / limit);
  return { page, limit, total, pages, has_more: page < pages };
};

export const deleted = (id: string, object: string): Schemas['DeletedResult'] => ({ id, object, deleted: true });

/** A route; an HTTP route with the URL its provider posts inbound messages to. */
export const toRoute = (row: RouteRow, inboundUrl: (dlrToken: string) => string): Schemas['Route'] => ({
  id: row.id,
  object: 'route',
  name: row.name,
  provider: row.provider,
  price_per_segment: toAmount(row.price_per_segment),
  prefixes: row.prefixes,
  is_active: row.is_active,
  created_at: iso(row.created_at),
  ...(row.provider === 'http' && { inbound_url: inboundUrl(row.dlr_token) }),
});

export const toRouteAssignment = (row: AssignmentRow): Schemas['RouteAssignment'] => ({
  object: 'route_assignment',
  account_id: row.account_id,
  route_id: row.route_id,
  priority: row.priority,
  created_at: iso(row.created_at),
});

export const toBlocklistEntry = (row: BlocklistRow): Schemas['BlocklistEntry'] => ({
  id: row.id,
  object: 'blocklist_entry',
  number: row.number,
  account_id: row.account_id,
  reason: row.reason,
  created_at: iso(row.created_at),
});

export const toWebhookEndpoint = (row: EndpointRow): Schemas['WebhookEndpoint'] => ({
  id: row.id,
  object: 'webhook_endpoint',
  url: row.url,
  description: row.description,
  events: row.events as Schemas['WebhookEndpoint']['events'],
  is_active: row.is_active,
  failure_count: row.failure_count,
  last_success_at: isoOrNull(row.last_success_at),
  last_failure_at: isoOrNull(row.last_failure_at),
  disabled_at: isoOrNull(row.disabled_at),
  created_at: iso(row.created_at),
});

export const toWebhookEndpointWithSecret = (row: EndpointRow): Schemas['WebhookEndpointWithSecret'] => ({
  ...toWebhookEndpoint(row),
  signing_secret: row.signing_secret,
});

export const toRotatedWebhookEndpoint = (row: EndpointRow): Schemas['RotatedWebhookEndpoint'] => ({
  ...toWebhookEndpointWithSecret(row),
  previous_secret_expires_at: isoOrNull(row.previous_secret_expires_at),
});

/** An event of any type, as `GET /events` lists it. */
export type AnyEvent = Schemas['EventPageEnvelope']['data'][number];

// `data` was stored as its subject's view when the event was recorded; its type follows `type`.
export const toEvent = (row: EventRow): AnyEvent =>
  ({
    id: row.id,
    object: 'event',
    type: row.type,
    created_at: iso(row.created_at),
    data: row.data,
  }) as AnyEvent;

export const toOptOut = (row: OptOutRow): Schemas['OptOut'] => optOutView(row);

export const toAdminOptOut = (row: OptOutRow): Schemas['AdminOptOut'] => ({ ...optOutView(row), account_id: row.account_id });

export const toKeywordSettings = (settings: KeywordSettings): Schemas['KeywordSettings'] => {
  const list = (kind: KeywordKind): Schemas['KeywordList'] => ({
    default_keywords: [...DEFAULT_KEYWORDS[kind]],
    keywords: settings.keywords[kind],
    reply: replyText(settings, kind),
    reply_is_default: settings.replies[kind] === null,
  });
  return {
    object: 'keyword_settings',
    opt_out: list('opt_out'),
    opt_in: list('opt_in'),
    help: list('help'),
    updated_at: settings.updatedAt && iso(settings.updatedAt),
  };
};

export const toWebhookAttempt = (row: AttemptRow): Schemas['WebhookAttempt'] => ({
  id: row.id,
  object: 'webhook_attempt',
  endpoint_id: row.endpoint_id,
  event_id: row.event_id,
  attempt: row.attempt,
  succeeded: row.succeeded,
  status_code: row.status_code,
  error: row.error,
  duration_ms: row.duration_ms,
  created_at: iso(row.created_at),
});

export const toWebhookResend = ({ endpoint, event, delivery }: Resend): Schemas['WebhookResend'] => ({
  object: 'webhook_resend',
  endpoint_id: endpoint.id,
  event_id: event.id,
  event_type: event.type,
  queued_at: iso(delivery.created_at),
});

export const toAuditLogEntry = (row: AuditRow): Schemas['AuditLogEntry'] => ({
  id: row.id,
  object: 'audit_log_entry',
  action: row.action,
  target_type: row.target_type,
  target_id: row.target_id,
  before: row.before as Schemas['AuditLogEntry']['before'],
  after: row.after as Schemas['AuditLogEntry']['after'],
  reason: row.reason,
  operator: { id: row.operator_id, name: row.operator_name },
  created_at: iso(row.created_at),
});

export const toOperator = (row: ListedOperator): Schemas['Operator'] => ({
  id: row.id,
  object: 'operator',
  name: row.name,
  role: row.role,
  created_at: iso(row.created_at),
  revoked_at: isoOrNull(row.revoked_at),
  last_used_at: isoOrNull(row.last_used_at),
});

export const toAdminSender = (row: SenderRow): Schemas['AdminSender'] => ({ ...toSender(row), account_id: row.account_id });

export const toAdminMessage = (row: MessageRow): Schemas['AdminMessage'] => ({ ...messageView(row), account_id: row.account_id });

/** A route as assigned to one account: the route, with the assignment's priority and time. */
export const toAccountRoute = (row: RouteRow & { priority: number; assigned_at: Date }, inboundUrl: (dlrToken: string) => string): Schemas['AccountRoute'] => ({
  ...toRoute(row, inboundUrl),
  priority: row.priority,
  assigned_at: iso(row.assigned_at),
});

/** A ledger row, in its account's currency (the ledger stores amounts only). */
export const toBalanceTransaction = (row: LedgerEntryRow, currency: string): Schemas['BalanceTransaction'] => ({
  id: `txn_${row.id}`,
  object: 'balance_transaction',
  type: row.kind,
  amount: toAmount(row.amount),
  currency,
  balance_after: toAmount(row.balance_after),
  message_id: row.message_id,
  description: row.description,
  created_at: iso(row.created_at),
});

type StoryEntry = Schemas['MessageStory']['entries'][number];

export const toMessageStory = ({ message, entries }: MessageStory): Schemas['MessageStory'] => ({
  object: 'message_story',
  message: toAdminMessage(message),
  entries: entries.map((entry): StoryEntry => {
    const at = iso(entry.at);
    switch (entry.kind) {
      case 'status':
        return { at, kind: 'status', status: entry.status };
      case 'attempt': {
        const { route_id, outcome, error_code, error_message, duration_ms } = entry.attempt;
        return { at, kind: 'attempt', attempt: entry.number, route_id, outcome, error_code, error_message, duration_ms };
      }
      case 'event':
        return { at, kind: 'event', event_id: entry.event.id, type: entry.event.type };
      case 'webhook_delivery':
        return { at, kind: 'webhook_delivery', webhook_attempt: toWebhookAttempt(entry.webhookAttempt) };
      case 'ledger':
        return { at, kind: 'ledger', transaction: toBalanceTransaction(entry.entry, message.currency) };
    }
  }),
});

const toStatsFigures = (figures: StatsFigures): Schemas['StatsFigures'] => ({
  messages: figures.messages,
  by_status: figures.byStatus,
  delivery_rate: figures.deliveryRate,
  failures: figures.failures,
  cost: toAmount(figures.cost),
  latency_ms: figures.latencyMs,
  submits: figures.submits,
  submit_success_rate: figures.submitSuccessRate,
});

export function toStats(stats: Stats, currency: string | null = stats.currency): Schemas['Stats'] {
  // A day by hour holds each hour's start once per route and country: each is written out once.
  const periods = new Map<number, string>();
  const period = (start: Date) => {
    let shown = periods.get(start.getTime());
    if (shown === undefined) periods.set(start.getTime(), (shown = iso(start)));
    return shown;
  };
  return {
    object: 'stats',
    from: iso(stats.from),
    to: iso(stats.to),
    interval: stats.interval,
    group_by: stats.groupBy,
    currency,
    totals: toStatsFigures(stats.totals),
    // Built field by field rather than spread: a day by hour, route and country has a hundred groups and more.
    groups: stats.groups.map((group) => {
      const shown: Partial<Schemas['StatsGroup']> = {};
      if (group.period_start !== undefined) shown.period_start = period(group.period_start);
      if (group.account_id !== undefined) shown.account_id = group.account_id;
      if (group.route_id !== undefined) shown.route_id = group.route_id;
      if (group.country !== undefined) shown.country = group.country;
      return Object.assign(shown, toStatsFigures(group));
    }),
  };
}
