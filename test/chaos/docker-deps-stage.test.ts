import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);

/** The deps stage of the Dockerfile: its COPY sources and destinations, and its one RUN command. */
function depsStage(dockerfile: string): { copies: { sources: string[]; destination: string }[]; command: string } {
  const stage = dockerfile.split(/^FROM .*$/m)[1];
  const copies = [...stage.matchAll(/^COPY (?!--)(.+)$/gm)].map(([, args]) => {
    const paths = args.trim().split(/\s+/);
    return { sources: paths.slice(0, -1), destination: paths[paths.length - 1] };
  });
  const command = /^RUN (.+)$/m.exec(stage)?.[1];
  if (command === undefined) throw new Error('the deps stage has no RUN line');
  return { copies, command };
}

// Where no container runtime is (test/app/docker.test.ts then skips the image), the deps stage is
// replayed outside one: only what it copies, installed as it installs. Production dependencies
// only, so the console's build finds nothing of the root's development dependencies: a type the
// console took from them (Node's, for vite.config.ts) once failed this build in the image alone.
describe("the Docker image's dependency stage, replayed without a container runtime", function () {
  this.timeout(600_000);
  let directory = '';

  before(async () => {
    directory = await mkdtemp(join(tmpdir(), 'dispatch-deps-stage-'));
  });

  after(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('installs the production dependencies from what the stage copies, and builds the console with them', async () => {
    const { copies, command } = depsStage(await readFile('Dockerfile', 'utf8'));
    for (const { sources, destination } of copies) {
      for (const source of sources) {
        // .dockerignore leaves out the console's own install and build.
        const skipped = (path: string) => ['node_modules', 'dist'].includes(basename(path)) && path.includes('console');
        const target = destination.endsWith('/') ? join(directory, destination, basename(source)) : join(directory, destination);
        await cp(source, target, { recursive: true, filter: (path) => !skipped(path) });
      }
    }
    const { NODE_ENV: _unset, ...env } = process.env;
    await run('sh', ['-c', command], { cwd: directory, env, maxBuffer: 64 * 1024 * 1024 });

    expect(existsSync(join(directory, 'console', 'dist', 'index.html')), 'the console is built').to.equal(true);
    expect(existsSync(join(directory, 'node_modules', 'node')), 'the node package is removed').to.equal(false);
    const devDependencies = Object.keys((JSON.parse(await readFile('package.json', 'utf8')) as { devDependencies: Record<string, string> }).devDependencies);
    expect(devDependencies.filter((name) => existsSync(join(directory, 'node_modules', name)))).to.deep.equal([]);
  });
});
