import { expect } from 'chai';
import { multiply } from '../../domain/money.ts';
import { call } from './client.ts';
import { sendingTenant, type Tenant } from './fixtures.ts';
import { harness } from './harness.ts';
import type { MoneySnapshot } from './money-ledger.ts';
import {
  allowedOutcomes,
  describeOutcome,
  expectedCarriedStatus,
  sameOutcome,
  type MoneyModel,
  type Outcome,
  type RouteSetup,
  type RunScenario,
} from './money-model.ts';
import { PlannedUpstreams } from './money-upstreams.ts';

/** Numbers of the run's account: sendable ones, one it blocklisted, one that cannot exist, one that is not E.164. */
export const NUMBERS = {
  valid: ['+447400123401', '+447400123402', '+447400123403'],
  blocklisted: '+447400123499',
  impossible: '+10005550123',
  malformed: '12345',
} as const;

/** The running service as one run of the property sees it: a fresh account, its routes and their upstreams. */
export interface MoneyWorld {
  tenant: Tenant;
  /** Route ids in priority order; route `i` is served by upstream `i`. */
  routeIds: number[];
  upstreams: PlannedUpstreams;
}

const UNKNOWN_OUTCOME_CONFIG: Record<RouteSetup['afterUnknown'], object> = {
  fail: {},
  retry_same_route: { idempotent: true },
  fail_over: { failover_on_timeout: true },
};

/** A fresh account with an approved sender, one HTTP route per setup (in that priority) and a blocklisted number. */
export async function openWorld(scenario: RunScenario): Promise<MoneyWorld> {
  const upstreams = await PlannedUpstreams.start(scenario.routes.length);
  try {
    const tenant = await sendingTenant({
      balance: Number(scenario.openingBalance),
      routes: scenario.routes.map((setup, route) => ({
        provider: 'http' as const,
        config: { ...upstreams.config(route), ...UNKNOWN_OUTCOME_CONFIG[setup.afterUnknown] },
        price: Number(setup.price),
      })),
    });
    const blocked = await call('POST', '/admin/blocklist', {
      auth: 'admin',
      body: { number: NUMBERS.blocklisted, account_id: tenant.accountId, reason: 'Money property test' },
    });
    expect(blocked.status, JSON.stringify(blocked.body)).to.equal(201);
    return { tenant, routeIds: tenant.routeIds, upstreams };
  } catch (error) {
    await upstreams.stop();
    throw error;
  }
}

/** Waits until no message of the account is pending: every send job has finished with it. */
export async function waitUntilQuiet(world: MoneyWorld, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = await harness.db('messages').where({ account_id: world.tenant.accountId, status: 'pending' }).select('id');
    if (pending.length === 0) return;
    if (Date.now() > deadline) {
      const attempts = await harness
        .db('message_attempts')
        .whereIn(
          'message_id',
          pending.map((row) => row.id),
        )
        .orderBy('id');
      const seen = pending.map((row) => world.upstreams.submissionsOf(row.id));
      throw new Error(`messages still pending after ${timeoutMs} ms: ${JSON.stringify({ pending, attempts, seen })}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Once quiet, every message the test sent ended as the contract allows for the answers planned
 * for it: offered to the routes it may be offered to, in order and once each; carried at its
 * carrier's price and in the state its carrier's first report gave it; or failed with the
 * expected code. A message the test does not know of (a refused send) holds no money.
 */
export function expectOutcomes(model: MoneyModel, world: MoneyWorld, snapshot: MoneySnapshot): void {
  const { routes } = model.scenario;
  for (const message of snapshot.messages) {
    const planned = model.messages.get(message.id);
    if (!planned) {
      expect(message, 'a message the test never had accepted').to.include({ status: 'failed', cost: '0.0000' });
      continue;
    }
    const route = message.route_id === null ? null : world.routeIds.indexOf(message.route_id);
    const actual: Outcome = {
      status: message.status === 'failed' ? 'failed' : 'carried',
      route: message.status === 'failed' ? null : route,
      code: message.status === 'failed' ? (message.error?.code ?? null) : null,
      tried: world.upstreams.submissionsOf(message.id).map((submission) => submission.route),
    };
    const allowed = allowedOutcomes(planned.answers, routes, planned.segments);
    const what = `${message.id} (answers [${planned.answers.join(', ')}], routes ${JSON.stringify(routes)}, ${planned.segments} segment(s))`;
    expect(
      allowed.some((outcome) => sameOutcome(outcome, actual)),
      `${what} was ${describeOutcome(actual)}; allowed: ${allowed.map(describeOutcome).join('; ')}`,
    ).to.equal(true);
    if (actual.status === 'carried') {
      expect(message.status, `${what}: its status`).to.equal(expectedCarriedStatus(model.reports, message.id, route as number));
      expect(message.cost, `${what}: its cost`).to.equal(multiply(routes[route as number].price, planned.segments));
    }
  }
}
