import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { cpuProfileArgs, startNode } from '../../scripts/bench/processes.ts';
import { parseOptions } from '../../scripts/bench/options.ts';

describe("the bench's --cpu-prof", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dispatch-cpu-prof-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is off unless asked for, and names its directory from where the bench was started', () => {
    expect(parseOptions([]).cpuProfileDir).to.equal(undefined);
    expect(parseOptions(['--quick', '--cpu-prof', 'profiles']).cpuProfileDir).to.equal(resolve('profiles'));
  });

  it('has a process started with it leave its CPU profile, named after the process, when the bench stops it', async () => {
    // As Dispatch does, it exits on SIGTERM; it says when it is ready for one.
    const script = join(dir, 'busy.mjs');
    await writeFile(
      script,
      "process.on('SIGTERM', () => process.exit(0)); const end = Date.now() + 100; while (Date.now() < end); console.log('ready'); setInterval(() => {}, 1000);\n",
    );
    const busy = startNode('busy-1', script, {}, dir, cpuProfileArgs('busy-1', join(dir, 'profiles')));
    while (!(await readFile(busy.logFile, 'utf8').catch(() => '')).includes('ready')) await new Promise((wake) => setTimeout(wake, 20));
    await busy.stop();
    expect(await readdir(join(dir, 'profiles'))).to.deep.equal(['busy-1.cpuprofile']);
    const profile = JSON.parse(await readFile(join(dir, 'profiles', 'busy-1.cpuprofile'), 'utf8')) as { nodes: unknown[]; samples: unknown[] };
    expect(profile.nodes).to.have.length.above(0);
    expect(profile.samples).to.have.length.above(0);
  });
});
