import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);

/** The README's ```sh blocks, in order. */
async function shellBlocks(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('the README quick start', function () {
  this.timeout(180_000);
  let dir: string;
  let server: ChildProcess | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dispatch-readme-'));
    // The embedded server runs as OS user postgres, which must be able to reach DATA_DIR inside.
    await chmod(dir, 0o755);
    const { stdout } = await run('git', ['ls-files', '-z']);
    for (const file of stdout.split('\0').filter(Boolean)) await cp(file, join(dir, file), { recursive: true });
  });

  after(async () => {
    if (server?.pid && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      process.kill(-server.pid, 'SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('runs as written in a fresh copy: npm install, npm start, then the curl send shows the message delivered', async () => {
    expect(await portIsFree(3000), 'the quick start uses port 3000, which something else holds').to.equal(true);
    const [twoCommands, sendAndRead] = await shellBlocks();
    const [install, start] = twoCommands.trim().split('\n');
    expect([install, start]).to.deep.equal(['npm install', 'npm start']);
    const env = { ...process.env, DATABASE_URL: '', ADMIN_TOKEN: '', PORT: '', DATA_DIR: '' };

    await run('bash', ['-c', install], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });

    server = spawn('bash', ['-c', start], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not print the demo key in time:\n${output}`)), 90_000);
      server?.stdout?.on('data', (chunk) => {
        output += chunk;
        if (/curl .*Bearer ds_live_/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      server?.stderr?.on('data', (chunk) => (output += chunk));
    });

    const { stdout } = await run('bash', ['-e', '-c', sendAndRead], { cwd: dir, env });
    const [sent, read] = stdout.trim().split('\n').filter((line) => line.startsWith('{'));
    expect(JSON.parse(sent).data).to.include({ status: 'pending', to: '+14155550123' });
    expect(JSON.parse(read).data).to.include({ id: JSON.parse(sent).data.id, status: 'delivered' });
  });
});
