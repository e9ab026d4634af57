import { expect } from 'chai';
import { parseOptions, TARGETS } from '../../scripts/bench/options.ts';

describe("the bench's options", () => {
  it('leaves the open loops at half of the send closed loop unless given a whole rate', () => {
    expect(parseOptions([]).openLoopRate).to.equal(undefined);
    expect(parseOptions(['--quick', '--only', 'open-loop', '--open-loop-rate', '250']).openLoopRate).to.equal(250);
  });

  it('refuses a rate that is not a whole number of sends a second', () => {
    for (const rate of ['0', '-5', '2.5', 'fast'])
      expect(() => parseOptions([`--open-loop-rate=${rate}`]), rate).to.throw(/--open-loop-rate must be a whole number/);
  });

  it('takes targets by the names the table prints, and refuses any other', () => {
    expect([...(parseOptions(['--only', 'webhooks,bulk']).only ?? [])]).to.deep.equal(['webhooks', 'bulk']);
    expect(TARGETS).to.include.members(['send', 'open-loop', 'floor', 'soak', 'totals']);
    expect(() => parseOptions(['--only', 'webhooks,4'])).to.throw(/unknown targets: 4/);
  });
});
