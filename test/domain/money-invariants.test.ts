import { checkMoneyProperty, FIXED_SEED } from '../support/money-property.ts';

describe('money under random interleavings of credits, sends, failovers, unknown outcomes, refunds and reports', () => {
  it('keeps the balance equal to the ledger, never negative, and equal to the credits minus every unrefunded message, after every step', async function () {
    this.timeout(180_000);
    await checkMoneyProperty({ numRuns: 30, maxCommands: 25, seed: FIXED_SEED });
  });
});
