import { mochaHooks as runHooks } from '../../support/root-hooks.ts';

// Chaos tests never touch the machine's shared PostgreSQL: without DATABASE_URL, the run's own
// database (for tests that need only one) is an embedded server in a temporary directory, and the
// fault tests start clusters of their own (postgres-cluster.ts).
delete process.env.DATABASE_URL;

export const mochaHooks = runHooks;
