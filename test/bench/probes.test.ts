import { expect } from 'chai';
import { cpuBetween, cpuPer, sampleCpu, TICKS_PER_SECOND } from '../../scripts/bench/probes.ts';

describe("the bench's CPU readings", () => {
  it("reads the machine's busy ticks from /proc/stat, which only grow", async () => {
    const before = await sampleCpu();
    const end = Date.now() + 200;
    while (Date.now() < end); // busy for 200 ms: at least a tick of this core
    const cpu = cpuBetween(before, await sampleCpu());
    expect(cpu.busySeconds).to.be.at.least(1 / TICKS_PER_SECOND);
    expect(cpu.wallSeconds).to.be.at.least(0.2);
    expect(cpu.cores).to.be.at.least(1);
  });

  it('gives what was spent between two samples, and the CPU a message', () => {
    const cpu = cpuBetween({ at: 1000, busyTicks: 10_000 }, { at: 3000, busyTicks: 10_300 });
    expect([cpu.busySeconds, cpu.wallSeconds, cpu.busyCores]).to.deep.equal([3, 2, 1.5]);
    expect(cpuPer({ ...cpu, cores: 2 }, 2000)).to.equal('1.50 ms a message (1.50 of 2 cores busy)');
  });
});
