import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, stat, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { call } from '../support/client.ts';

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** Runs `npm start`'s command as a newcomer would, and waits for it to say it is listening. */
async function start(dataDir: string, until: RegExp): Promise<Started> {
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.ADMIN_TOKEN;
  const child = spawn(process.execPath, ['app/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not started in time:\n${output}`)), 60_000);
    const check = () => {
      if (until.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    // The banner goes to stderr: stdout carries only log records.
    child.stderr.on('data', check);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
  return { child, output: () => output };
}

async function stop({ child }: Started): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

describe('npm start with no DATABASE_URL', function () {
  this.timeout(120_000);
  let dataDir: string;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'dispatch-start-'));
  });

  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts an embedded PostgreSQL, seeds the demo tenant, prints a key that works, and stops cleanly on SIGTERM', async () => {
    const first = await start(dataDir, /curl .*\n/);
    const key = /API key: +(ds_live_\S+)/.exec(first.output())?.[1] as string;
    const baseUrl = /Base URL: +(\S+)/.exec(first.output())?.[1] as string;
    expect(key).to.match(/^ds_live_/);

    const account = (await call('GET', '/account', { auth: key, baseUrl })).body;
    expect(account.data).to.include({ name: 'Demo', balance: 10, currency: 'USD' });
    const senders = (await call('GET', '/senders?status=approved', { auth: key, baseUrl })).body;
    expect(senders.data.map((s: { sender_id: string }) => s.sender_id)).to.deep.equal(['Dispatch']);

    const credentials = join(dataDir, 'credentials.json');
    expect((await stat(credentials)).mode & 0o777).to.equal(0o600);
    const saved = JSON.parse(await readFile(credentials, 'utf8'));
    expect(saved.api_key).to.equal(key);
    const admin = await call('GET', `/admin/accounts/${account.data.id}`, { headers: { authorization: `Bearer ${saved.admin_token}` }, baseUrl });
    expect(admin.status).to.equal(200);

    expect(await stop(first)).to.equal(0);
  });

  it('keeps its data and seeds nothing on the next start', async () => {
    const saved = JSON.parse(await readFile(join(dataDir, 'credentials.json'), 'utf8'));
    const second = await start(dataDir, /listening on \S+\s/);
    expect(second.output()).to.not.match(/API key:/);
    const baseUrl = /listening on (\S+)/.exec(second.output())?.[1] as string;
    const response = await call('GET', '/account', { auth: saved.api_key, baseUrl });
    expect(response.status).to.equal(200);
    expect(await stop(second)).to.equal(0);
  });

  it('runs its PostgreSQL with room for a quarter of an hour of WAL, so that checkpoints come by time', async () => {
    const started = await start(dataDir, /listening on \S+\s/);
    // The server's own record of where it listens: port on line 4, socket directory on line 5.
    const [, , , port, socketDir] = (await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n');
    const password = (await readFile(join(dataDir, 'postgres-password'), 'utf8')).trim();
    const client = new pg.Client({ host: socketDir, port: Number(port), user: 'postgres', password, database: 'dispatch' });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT current_setting('max_wal_size') AS wal, current_setting('checkpoint_timeout') AS timeout");
      expect(rows[0]).to.deep.equal({ wal: '8GB', timeout: '15min' });
    } finally {
      await client.end();
    }
    expect(await stop(started)).to.equal(0);
  });

  it('exits 1 with one line naming a port in use, and leaves no PostgreSQL of its own running', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const env: Record<string, string | undefined> = { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
      delete env.DATABASE_URL;
      const child = spawn(process.execPath, ['app/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise((resolve) => child.once('exit', resolve));
      expect(code, stderr).to.equal(1);
      expect(stderr.trim()).to.equal(`dispatch: cannot listen on 127.0.0.1:${port}: the port is in use; set PORT to another port`);
      // Its embedded server stopped: the data directory holds no postmaster.pid.
      expect(
        await stat(join(dataDir, 'postgres', 'postmaster.pid')).then(
          () => 'running',
          () => 'stopped',
        ),
      ).to.equal('stopped');
    } finally {
      taken.close();
    }
  });

  it('stops with a one-line message naming a bad variable', async () => {
    const child = spawn(process.execPath, ['app/main.ts'], { env: { ...process.env, PORT: 'eighty' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).to.equal(1);
    expect(stderr.trim()).to.equal("dispatch: invalid configuration: PORT must be an integer from 0 to 65535, got 'eighty'");
  });
});
