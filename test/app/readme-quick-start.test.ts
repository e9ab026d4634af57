import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePort } from '../../app/free-port.ts';
import { call } from '../support/client.ts';
import { eventually } from '../support/fixtures.ts';

const run = promisify(execFile);

/** The README's ```sh blocks, in order. */
async function shellBlocks(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
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
    const [twoCommands, sendAndRead] = await shellBlocks();
    const [install, start] = twoCommands.trim().split('\n');
    expect([install, start]).to.deep.equal(['npm install', 'npm start']);
    // As written, but on a free port rather than the default 3000, which another run on the same
    // machine (or anything else) may hold: PORT for npm start, the same port in the curl commands.
    expect(sendAndRead).to.include('http://127.0.0.1:3000/');
    const port = await freePort();
    const env = { ...process.env, DATABASE_URL: '', ADMIN_TOKEN: '', PORT: String(port), DATA_DIR: '' };

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

    const { stdout } = await run('bash', ['-e', '-c', sendAndRead.replaceAll('http://127.0.0.1:3000/', `http://127.0.0.1:${port}/`)], { cwd: dir, env });
    const [sent, read] = stdout.trim().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line).data);
    expect(sent).to.include({ status: 'pending', to: '+14155550123' });
    // The README reads it back after `sleep 2`, a pause for a person; on a busy machine the message
    // may still be on its way then. It is the same message, and it does arrive.
    expect(read).to.include({ id: sent.id });
    expect(['pending', 'sent', 'delivered']).to.include(read.status);
    const { api_key: key } = JSON.parse(await readFile(join(dir, '.data', 'credentials.json'), 'utf8'));
    const baseUrl = `http://127.0.0.1:${port}/api/v1`;
    await eventually(async () => (await call('GET', `/messages/${sent.id}`, { auth: key, baseUrl })).body.data, (message) => message.status === 'delivered', { what: 'the quick-start message to be delivered' });
  });
});
