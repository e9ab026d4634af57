/** Sets up what the load needs through Dispatch's own admin API, as an operator would. */

export interface Tenant {
  accountId: string;
  /** Plain API keys with every scope and a rate limit of 6,000 a minute. */
  keys: string[];
  /** An approved sender of the account. */
  from: string;
}

export interface KeySettings {
  rate_limit?: number;
  daily_limit?: number;
  monthly_limit?: number;
}

const SENDER = 'Bench';
/** Admin calls made at once while setting up (setup is not measured, but should be quick). */
const SETUP_CONCURRENCY = 8;

async function call<T>(baseUrl: string, token: string, method: string, path: string, body?: object): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}

export class Admin {
  readonly #baseUrl: string;
  readonly #token: string;

  constructor(baseUrl: string, token: string) {
    this.#baseUrl = baseUrl;
    this.#token = token;
  }

  /** An `http` route to the fake upstream, for every destination. */
  async createRoute(submitUrl: string): Promise<number> {
    const route = await call<{ id: number }>(this.#baseUrl, this.#token, 'POST', '/admin/routes', {
      name: 'bench upstream',
      provider: 'http',
      config: { url: submitUrl },
      price_per_segment: 0.001,
    });
    return route.id;
  }

  /** An account with a large balance, the route, an approved sender and `keyCount` keys. */
  async createTenant(name: string, routeId: number, keyCount: number): Promise<Tenant> {
    const account = await call<{ id: string }>(this.#baseUrl, this.#token, 'POST', '/admin/accounts', {
      email: `${name}@bench.example.com`,
      name,
      balance: 100_000_000,
    });
    await call(this.#baseUrl, this.#token, 'PUT', `/admin/accounts/${account.id}/routes/${routeId}`, { priority: 0 });
    const keys = await this.createKeys(account.id, keyCount);
    const sender = await call<{ id: string }>(this.#baseUrl, keys[0].plain_key, 'POST', '/senders/create', { sender_id: SENDER });
    await call(this.#baseUrl, this.#token, 'POST', `/admin/senders/${sender.id}/approve`);
    return { accountId: account.id, keys: keys.map((key) => key.plain_key), from: SENDER };
  }

  async createKeys(accountId: string, count: number, settings: KeySettings = {}): Promise<Array<{ id: string; plain_key: string }>> {
    const keys: Array<{ id: string; plain_key: string }> = [];
    for (let i = 0; i < count; i += SETUP_CONCURRENCY) {
      const batch = Array.from({ length: Math.min(SETUP_CONCURRENCY, count - i) }, (_, j) =>
        call<{ id: string; plain_key: string }>(this.#baseUrl, this.#token, 'POST', `/admin/accounts/${accountId}/api-keys`, {
          name: `bench ${i + j}`,
          rate_limit: 6000,
          ...settings,
        }),
      );
      keys.push(...(await Promise.all(batch)));
    }
    return keys;
  }
}
