import { mochaHooks as runHooks } from '../../support/root-hooks.ts';
import { testFailed, writeFigures } from './figures.ts';

// Chaos tests never touch the machine's shared PostgreSQL: without DATABASE_URL, the run's own
// database (for tests that need only one) is an embedded server in a temporary directory, and the
// fault tests start clusters of their own (postgres-cluster.ts).
delete process.env.DATABASE_URL;

/** The run's hooks, and the figures RELIABILITY.md reports, written once every test has run. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    await runHooks.beforeAll.call(this);
  },
  afterEach(this: Mocha.Context) {
    if (this.currentTest?.state === 'failed') testFailed(this.currentTest.fullTitle());
    runHooks.afterEach.call(this);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await writeFigures();
    await runHooks.afterAll.call(this);
  },
};
