// dispatch keys create (admin API: a key for any account, e.g. a new customer's first key), keys
// list (your keys with an API key, or an account's with --account and the admin token), keys
// current (the API key in use, whatever its scopes) and keys revoke (customer API: the admin API
// has no revocation).
import { Command, Option } from 'commander';
import type { ApiKey, ApiKeyWithSecret } from '../admin-client.ts';
import { adminOptions, customerOptions, integer, list, positiveInteger, run, timestamp } from '../context.ts';
import { fields, table } from '../output.ts';

export const showKey = (key: ApiKeyWithSecret) =>
  fields([
    ['ID', key.id],
    ['Name', key.name],
    ['Key', key.plain_key],
    ['Permissions', key.permissions],
    ['Rate limit', `${key.rate_limit}/min`],
    ['Daily limit', key.daily_limit],
    ['Monthly limit', key.monthly_limit],
    ['Allowed IPs', key.allowed_ips],
    ['Expires', key.expires_at],
    ['Created', key.created_at],
  ]);

const keyTable = (keys: ApiKey[]) =>
  keys.length === 0
    ? 'No API keys.'
    : table(
        ['ID', 'Name', 'Key', 'Active', 'Permissions', 'Last used', 'Created'],
        keys.map((key) => [key.id, key.name, key.key_hint, key.is_active, key.permissions.join(', '), key.last_used_at, key.created_at]),
      );

interface CreateOptions {
  name: string;
  permissions?: string[];
  rateLimit?: number;
  dailyLimit?: number;
  monthlyLimit?: number;
  allowedIps?: string[];
  expiresAt?: string;
}

export function keysCommand(): Command {
  const keys = new Command('keys').description('Create API keys for accounts (admin), list and revoke keys');

  adminOptions(
    keys
      .command('create')
      .description('Create an API key for an account; the full key is shown this once')
      .argument('<account-id>', 'acct_...')
      .requiredOption('--name <name>', 'a name for the key')
      .option('--permissions <scopes>', 'comma-separated scopes, e.g. sms:send,sms:read (default: every scope)', list)
      .option('--rate-limit <n>', 'requests per minute (default 600)', positiveInteger)
      .option('--daily-limit <n>', 'messages per UTC day', integer)
      .option('--monthly-limit <n>', 'messages per UTC month', integer)
      .option('--allowed-ips <list>', 'comma-separated IPv4 addresses or CIDR ranges', list)
      .option('--expires-at <date-time>', 'expiry, e.g. 2026-12-31T00:00:00Z', timestamp),
  ).action((accountId: string, options: CreateOptions, command: Command) =>
    run(command, async ({ admin, out }) => {
      const key = await (
        await admin()
      ).createApiKey(accountId, {
        name: options.name,
        ...(options.permissions !== undefined && { permissions: options.permissions as ApiKeyWithSecret['permissions'] }),
        ...(options.rateLimit !== undefined && { rate_limit: options.rateLimit }),
        ...(options.dailyLimit !== undefined && { daily_limit: options.dailyLimit }),
        ...(options.monthlyLimit !== undefined && { monthly_limit: options.monthlyLimit }),
        ...(options.allowedIps !== undefined && { allowed_ips: options.allowedIps }),
        ...(options.expiresAt !== undefined && { expires_at: options.expiresAt }),
      });
      out.result(key, () => showKey(key));
      out.note('Store this key now: it is shown only once and cannot be retrieved later.');
    }),
  );

  adminOptions(
    keys
      .command('list')
      .description("List your account's API keys (API key), or an account's with --account (admin); never the keys themselves")
      .option('--account <account-id>', "list this account's keys (admin)")
      .addOption(new Option('--api-key <key>', 'an API key, ds_live_... [env: DISPATCH_API_KEY]').helpGroup('Connection options:')),
  ).action((options: { account?: string }, command: Command) =>
    run(command, async ({ admin, sdk, out }) => {
      const listed = options.account === undefined ? await (await sdk()).apiKeys.list() : await (await admin()).listAccountApiKeys(options.account);
      out.result(listed, () => keyTable(listed.data));
    }),
  );

  customerOptions(keys.command('current').description('Show the API key in use: its scopes, limits and last use (any key may)')).action(
    (_options: object, command: Command) =>
      run(command, async ({ sdk, out }) => {
        const key = await (await sdk()).apiKeys.current();
        out.result(key, () => keyTable([key]));
      }),
  );

  customerOptions(
    keys
      .command('revoke')
      .description('Revoke one of your API keys (API key): it stops working at once; it stays listed, inactive')
      .argument('<key-id>', 'key_...'),
  ).action((id: string, _options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const revoked = await (await sdk()).apiKeys.revoke(id);
      out.result(revoked, () => `Revoked ${revoked.id}.`);
    }),
  );

  return keys;
}
