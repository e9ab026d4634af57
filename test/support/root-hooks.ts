import { createTestDatabase } from './database.ts';
import { harness, startHarness, stopHarness } from './harness.ts';

let failed = false;

/** One fresh database and one Dispatch for the whole run; the database is dropped unless a test failed. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await startHarness(await createTestDatabase());
  },
  afterEach(this: Mocha.Context) {
    harness.clock.reset();
    if (this.currentTest?.state === 'failed') failed = true;
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopHarness();
    const kept = await harness.database?.dispose(failed);
    if (kept) process.stderr.write(`\nA test failed: its database was kept at ${kept}\n`);
  },
};
