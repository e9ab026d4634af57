import { checkMoneyProperty } from '../support/money-property.ts';
import { scenario } from './support/figures.ts';

const RUNS = 150;
const MAX_STEPS = 50;

// npm test's property at length, on a new seed each run to explore further (a failure prints the
// MONEY_SEED and MONEY_PATH that replay it).
describe('money under long random interleavings of credits, sends, failovers, unknown outcomes, refunds and reports', () => {
  it('keeps the balance equal to the ledger, never negative, and equal to the credits minus every unrefunded message, after every step', async function () {
    this.timeout(900_000);
    const seed = Date.now();
    await checkMoneyProperty({ numRuns: RUNS, maxCommands: MAX_STEPS, seed });
    const recorded = scenario('money over random interleavings');
    recorded.measure('runs, each on a fresh account, checked after every step', RUNS);
    recorded.measure('steps per run, at most', MAX_STEPS);
    recorded.measure('seed', process.env.MONEY_SEED ?? String(seed));
  });
});
