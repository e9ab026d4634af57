import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  // npm install also installs and builds the web console (its prepare script): about 40 s more.
  this.timeout(240_000);
  let dir: string;
  let server: ChildProcess | undefined;
  let port: number;
  let env: NodeJS.ProcessEnv;
  /** A README block as written, on the free port rather than 3000 (see the first test). */
  const asWritten = (block: string) => {
    expect(block).to.include('http://127.0.0.1:3000/');
    return block.replaceAll('http://127.0.0.1:3000/', `http://127.0.0.1:${port}/`);
  };
  /** The JSON answers a block printed, one a line. */
  const answers = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));

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
      // The PostgreSQL of npm start may still be writing its last WAL as npm exits: the directory can go once it is down.
      await eventually(
        () => existsSync(join(dir, '.data', 'postgres', 'postmaster.pid')),
        (running) => !running,
        { what: 'the embedded PostgreSQL to stop' },
      );
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('runs as written in a fresh copy: npm install, npm start, then the curl send shows the message delivered', async () => {
    const [twoCommands, sendAndRead] = await shellBlocks();
    const [install, start] = twoCommands.trim().split('\n');
    expect([install, start]).to.deep.equal(['npm install', 'npm start']);
    // As written, but on a free port rather than the default 3000, which another run on the same
    // machine (or anything else) may hold: PORT for npm start, the same port in the curl commands.
    port = await freePort();
    env = { ...process.env, DATABASE_URL: '', ADMIN_TOKEN: '', PORT: String(port), DATA_DIR: '' };

    await run('bash', ['-c', install], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });

    server = spawn('bash', ['-c', start], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not print the demo key in time:\n${output}`)), 90_000);
      // The banner goes to stderr: stdout carries only log records.
      server?.stderr?.on('data', (chunk) => {
        output += chunk;
        if (/curl .*Bearer ds_live_/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      server?.stdout?.on('data', (chunk) => (output += chunk));
    });

    const { stdout } = await run('bash', ['-e', '-c', asWritten(sendAndRead)], { cwd: dir, env });
    const [sent, read] = answers(stdout).map((answer) => answer.data);
    expect(sent).to.include({ status: 'pending', to: '+14155550123' });
    // The README reads it back after `sleep 2`, a pause for a person; on a busy machine the message
    // may still be on its way then. It is the same message, and it does arrive.
    expect(read).to.include({ id: sent.id });
    expect(['pending', 'sent', 'delivered']).to.include(read.status);
    const { api_key: key } = JSON.parse(await readFile(join(dir, '.data', 'credentials.json'), 'utf8'));
    const baseUrl = `http://127.0.0.1:${port}/api/v1`;
    await eventually(
      async () => (await call('GET', `/messages/${sent.id}`, { auth: key, baseUrl })).body.data,
      (message) => message.status === 'delivered',
      { what: 'the quick-start message to be delivered' },
    );
  });

  it('then the STOP step runs as written: the reply opts the phone out, is confirmed once from the long code, and the next send is refused', async () => {
    expect(server?.exitCode, 'the server of the first test').to.equal(null);
    const stopStep = (await shellBlocks())[2];
    expect(stopStep).to.include('/admin/routes/1/inbound').and.include('"body": "STOP"');
    const { stdout } = await run('bash', ['-e', '-c', asWritten(stopStep)], { cwd: dir, env });
    const [sender, approved, inbound, refused] = answers(stdout);
    expect(sender.data).to.include({ object: 'sender', sender_id: '+12127000100', type: 'long_code', status: 'pending' });
    expect(approved.data).to.include({ id: sender.data.id, status: 'approved' });
    expect(inbound.data).to.include({ object: 'inbound_message', from: '+14155550123', to: '+12127000100', body: 'STOP', keyword: 'STOP', route_id: 1 });
    expect(inbound.data.account_id).to.be.a('string');
    expect(refused).to.deep.include({ success: false });
    expect(refused.error).to.include({ code: 'recipient_opted_out', param: 'to' });

    const { api_key: key } = JSON.parse(await readFile(join(dir, '.data', 'credentials.json'), 'utf8'));
    const baseUrl = `http://127.0.0.1:${port}/api/v1`;
    const optOuts = await call('GET', '/opt-outs', { auth: key, baseUrl });
    expect(optOuts.body.data.map((optOut) => [optOut.number, optOut.source, optOut.keyword])).to.deep.equal([['+14155550123', 'keyword', 'STOP']]);
    // Newest first: the confirmation, from the long code, then the first step's message; the refused send left nothing.
    const messages = await call('GET', '/messages', { auth: key, baseUrl });
    expect(messages.body.data.map((message: { to: string; from: string }) => [message.from, message.to])).to.deep.equal([
      ['+12127000100', '+14155550123'],
      ['Dispatch', '+14155550123'],
    ]);
  });

  it('then the controls step runs as written: a preview, a send scheduled within a window, and its cancel', async () => {
    expect(server?.exitCode, 'the server of the first test').to.equal(null);
    const controls = (await shellBlocks()).find((block) => block.includes('/messages/preview'));
    expect(controls).to.include('send_window').and.include('/cancel');
    const { stdout } = await run('bash', ['-e', '-c', asWritten(controls!)], { cwd: dir, env });
    const [preview, scheduled, canceled] = answers(stdout);
    expect(preview.data).to.include({ object: 'message_preview', total: 1, sendable: 1 });
    expect(preview.data.recipients[0]).to.include({ encoding: 'UCS-2', refusal: null });
    expect(preview.data.recipients[0].ucs2_characters.map((found: { character: string }) => found.character)).to.deep.equal(['“', '”', '—']);
    expect(scheduled.data).to.include({ status: 'pending' });
    expect(Date.parse(scheduled.data.send_at)).to.be.above(Date.now());
    expect(scheduled.data.send_window).to.include({ start: '09:00', end: '20:00' });
    expect(scheduled.data.send_window.time_zones).to.deep.equal(['America/Los_Angeles']);
    expect(canceled.data).to.include({ id: scheduled.data.id, status: 'failed', cost: 0 });
    expect(canceled.data.error).to.include({ code: 'canceled' });
  });
});
