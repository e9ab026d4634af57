import fc from 'fast-check';
import { QUEUES } from '../../db/queues.ts';
import { loadContract } from './client.ts';
import { harness } from './harness.ts';
import { moneyCommands, settle } from './money-commands.ts';
import { MoneyModel, type RouteSetup, type RunScenario } from './money-model.ts';
import { openWorld } from './money-world.ts';

/** npm test's seed, so that its runs are the same each time; MONEY_SEED overrides any seed. */
export const FIXED_SEED = 20261122;

const scenarios: fc.Arbitrary<RunScenario> = fc.record({
  routes: fc.array(
    fc.record({
      price: fc.constantFrom('0.0050', '0.0100', '0.0200', '0.0500'),
      afterUnknown: fc.constantFrom<RouteSetup['afterUnknown']>('fail', 'fail', 'retry_same_route', 'fail_over'),
    }),
    { minLength: 2, maxLength: 3 },
  ),
  openingBalance: fc.constantFrom('0.0000', '0.0300', '0.0500', '0.2000', '1.0000'),
});

/**
 * Runs random interleavings of credits, sends, bulk sends, upstream answers, delivery reports
 * and waits against the running service, each on a fresh account, checking the money
 * invariants after every step and every message's outcome whenever the pipeline is quiet.
 *
 * Send jobs are not retried meanwhile: a message every route refused retryably fails at once
 * instead of minutes later, so a run settles in seconds; the queue's options are restored after.
 */
export async function checkMoneyProperty(size: { numRuns: number; maxCommands: number; seed: number }): Promise<void> {
  const seed = Number(process.env.MONEY_SEED ?? size.seed);
  const path = process.env.MONEY_PATH;
  const property = fc.asyncProperty(scenarios, fc.commands(moneyCommands, { maxCommands: size.maxCommands, size: 'max' }), async (scenario, commands) => {
    const model = new MoneyModel(scenario);
    const world = await openWorld(scenario);
    try {
      await fc.asyncModelRun(() => ({ model, real: world }), commands);
      await settle(model, world);
    } finally {
      await world.upstreams.stop();
    }
  });

  // Compiling the contract blocks the event loop for seconds; done between two requests, it lets
  // the server's keep-alive timer close a connection the next request is already written to.
  await loadContract();
  await harness.dispatch.boss.updateQueue(QUEUES.sendMessage.name, { retryLimit: 0 });
  try {
    // Shrinking would replay runs of several seconds each for minutes; the seed and path reproduce a failure instead.
    const details = await fc.check(property, { numRuns: size.numRuns, seed, ...(path && { path }), endOnFailure: true });
    if (details.failed) {
      const report = await fc.asyncDefaultReportMessage(details);
      const cause = details.errorInstance instanceof Error ? details.errorInstance : new Error(String(details.errorInstance));
      throw new Error(`Reproduce with MONEY_SEED=${details.seed} MONEY_PATH=${details.counterexamplePath}\n${report}\n${cause.stack ?? cause.message}`, {
        cause,
      });
    }
  } finally {
    await harness.dispatch.boss.updateQueue(QUEUES.sendMessage.name, QUEUES.sendMessage.options);
  }
}
