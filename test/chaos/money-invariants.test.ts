import { checkMoneyProperty } from '../support/money-property.ts';

// npm test's property at length, on a new seed each run to explore further (a failure prints the
// MONEY_SEED and MONEY_PATH that replay it).
describe('money under long random interleavings of credits, sends, failovers, unknown outcomes, refunds and reports', () => {
  it('keeps the balance equal to the ledger, never negative, and equal to the credits minus every unrefunded message, after every step', async function () {
    this.timeout(900_000);
    await checkMoneyProperty({ numRuns: 150, maxCommands: 50, seed: Date.now() });
  });
});
