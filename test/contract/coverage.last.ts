import { expect } from 'chai';
import { observed } from '../support/client.ts';
import { documentedOperations } from '../support/operations.ts';

/**
 * Runs after every other test (it is the last spec in .mocharc.json): each
 * operation must have been seen answering its success and every error status it declares.
 * A 500 is exempt here: it is produced by one shared writer, tested once through a real fault.
 */
describe('contract coverage', () => {
  it('has a test of every declared status of every operation', () => {
    const missing = documentedOperations().flatMap((op) =>
      op.statuses.filter((status) => status !== 500 && !observed.has(`${op.operationId} ${status}`)).map((status) => `${op.operationId} ${status}`),
    );
    expect(missing, `untested answers:\n${missing.join('\n')}`).to.deep.equal([]);
  });
});
