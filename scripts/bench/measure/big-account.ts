import { log, type Bench } from '../context.ts';
import { count } from '../format.ts';
import { seedMessages } from '../message-log.ts';
import type { Tenant } from '../tenant.ts';

/** Limits that never refuse during the bench, so that only their cost shows. */
const LIMITS = { daily_limit: 2_000_000_000, monthly_limit: 2_000_000_000 };

export interface BigAccount {
  tenant: Tenant;
  seeded: number;
  /** Keys with daily and monthly limits: one has sent nothing this month, the other the seeded messages. */
  freshKey: string;
  busyKey: string;
}

/** The account of targets 5 and 6: `seededMessages` messages this month, all through one key with limits. */
export async function prepareBigAccount(bench: Bench): Promise<BigAccount> {
  const seeded = bench.options.durations.seededMessages;
  const tenant = await bench.tenant('big-account');
  const [fresh, busy] = await bench.admin.createKeys(tenant.accountId, 2, LIMITS);
  log(`5, 6: seeding ${count(seeded)} messages this month through one key (plain SQL), then VACUUM ANALYZE and CHECKPOINT`);
  const started = Date.now();
  await seedMessages(bench.pool, tenant.accountId, busy.id, seeded);
  log(`  seeded in ${Math.round((Date.now() - started) / 1000)} s`);
  return { tenant, seeded, freshKey: fresh.plain_key, busyKey: busy.plain_key };
}
