import { expect } from 'chai';
import { describeSeconds } from '../../scripts/bench/measure/open-loop.ts';

const second = (p99: number, count = 600) => ({ p50: p99 / 2, p90: p99 * 0.8, p99, max: p99 * 1.2, count });

describe("the bench's open loop, second by second", () => {
  it('gives the median and worst second, the first, and how many were over the limit, leaving out seconds with no answer', () => {
    const windows = [second(76), second(40), second(0, 0), second(44), second(93), second(30)];
    expect(describeSeconds(windows, 50)).to.equal('median 44 ms, worst 93 ms, the first 76 ms; 2 of 5 seconds over 50 ms');
  });

  it('says so when no second was answered', () => {
    expect(describeSeconds([second(0, 0)], 50)).to.equal('no seconds');
  });
});
