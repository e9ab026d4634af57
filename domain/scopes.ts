export const SCOPES = [
  'sms:send',
  'sms:bulk',
  'sms:read',
  'balance:read',
  'dlr:read',
  'account:read',
  'senders:read',
  'senders:write',
  'keys:read',
  'keys:write',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/** What a key created through the customer API holds when `permissions` is omitted. */
export const DEFAULT_SCOPES: Scope[] = ['sms:send', 'sms:read'];
