import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { cpuBetween, cpuPer, readCpuTicks, roleOf, TICKS_PER_SECOND, type CpuRole, type CpuSample } from '../../scripts/bench/probes.ts';

/**
 * A Node process that burns CPU, has a child of its own burn some and reaps it, then writes what
 * each counted itself (`process.cpuUsage`) and waits for its standard input to close, so that it
 * can be read from /proc while it lives.
 */
const BURNER = `
  const { execFileSync } = require('node:child_process');
  const burn = 'const end = Date.now() + 200; while (Date.now() < end); const u = process.cpuUsage(); process.stdout.write(String((u.user + u.system) / 1e6));';
  const child = Number(execFileSync(process.execPath, ['-e', burn]));
  const end = Date.now() + 400;
  while (Date.now() < end);
  const own = process.cpuUsage();
  process.stdout.write(JSON.stringify({ own: (own.user + own.system) / 1e6, child }));
  process.stdin.resume();
`;

const sample = (at: number, busyTicks: number, entries: [number, CpuRole, number][]): CpuSample => ({
  at,
  busyTicks,
  byPid: new Map(entries.map(([pid, role, ticks]) => [pid, { role, ticks }])),
});

describe("the bench's CPU readings", () => {
  it('reads what a process and the children it has reaped spent, as they count it themselves', async () => {
    const burner = spawn(process.execPath, ['-e', BURNER], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const [chunk] = (await once(burner.stdout, 'data')) as [Buffer];
      const counted = JSON.parse(chunk.toString('utf8')) as { own: number; child: number };
      const { ticks } = await readCpuTicks(burner.pid as number);
      // One tick is 10 ms; each count may round down by one, and the burner spends a little after counting.
      expect(ticks / TICKS_PER_SECOND).to.be.closeTo(counted.own + counted.child, 0.04);
      expect(counted.child).to.be.greaterThan(0.1);
    } finally {
      burner.stdin.end();
      await once(burner, 'exit');
    }
  });

  it('tells PostgreSQL, Dispatch (or the floor server in its place) and the fake upstream by name and command line, and nothing else', () => {
    expect(roleOf('postgres', 'postgres: postgres dispatch [local] idle')).to.equal('postgres');
    expect(roleOf('node', '/usr/bin/node /srv/dispatch/app/main.ts')).to.equal('dispatch');
    expect(roleOf('node', '/usr/bin/node /srv/dispatch/scripts/bench/floor-server.ts')).to.equal('dispatch');
    expect(roleOf('node', '/usr/bin/node /srv/dispatch/scripts/bench/fake-upstream.ts')).to.equal('upstream');
    expect(roleOf('node', '/usr/bin/node /srv/dispatch/scripts/bench/load-generator.ts {}')).to.equal(undefined);
    expect(roleOf('pgbench', 'pgbench --client 10')).to.equal(undefined);
  });

  it('counts a backend that exits between the samples once, through its postmaster, and a new process whole', () => {
    const before = sample(1000, 10_000, [
      [10, 'postgres', 500], // the postmaster, 0 ticks of reaped children yet
      [11, 'postgres', 30], // a backend, exits after spending 20 more ticks
      [20, 'dispatch', 1000],
      [30, 'upstream', 7],
    ]);
    const after = sample(3000, 10_300, [
      [10, 'postgres', 500 + 2 + 50], // 2 ticks of its own, and the backend's 50 reaped
      [12, 'postgres', 15], // a backend started in between
      [20, 'dispatch', 1240],
      [30, 'upstream', 9],
    ]);
    const cpu = cpuBetween(before, after);
    expect(cpu.byRole.postgres * TICKS_PER_SECOND).to.be.closeTo(2 + 20 + 15, 1e-9);
    expect(cpu.byRole.dispatch * TICKS_PER_SECOND).to.be.closeTo(240, 1e-9);
    expect(cpu.byRole.upstream * TICKS_PER_SECOND).to.be.closeTo(2, 1e-9);
    expect([cpu.busySeconds, cpu.wallSeconds, cpu.busyCores]).to.deep.equal([3, 2, 1.5]);
  });

  it('gives the CPU a message and its split, the rest being what no role spent', () => {
    const cpu = { busySeconds: 3, wallSeconds: 2, busyCores: 1.5, cores: 2, byRole: { postgres: 1.4, dispatch: 1.2, upstream: 0.2 } };
    expect(cpuPer(cpu, 2000)).to.equal('1.50 ms a message (1.50 of 2 cores busy): PostgreSQL 0.70, Dispatch 0.60, upstream 0.10, the rest 0.10 ms');
  });
});
