import { expect } from 'chai';
import { parseOptions } from '../../scripts/bench/options.ts';

describe("the bench's --open-loop-rate", () => {
  it('leaves targets 2 and 7 at half of target 1 unless given, and takes a whole rate', () => {
    expect(parseOptions([]).openLoopRate).to.equal(undefined);
    expect(parseOptions(['--quick', '--only', '2', '--open-loop-rate', '250']).openLoopRate).to.equal(250);
  });

  it('refuses a rate that is not a whole number of sends a second', () => {
    for (const rate of ['0', '-5', '2.5', 'fast'])
      expect(() => parseOptions([`--open-loop-rate=${rate}`]), rate).to.throw(/--open-loop-rate must be a whole number/);
  });
});
