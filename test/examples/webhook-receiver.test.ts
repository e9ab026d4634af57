import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { freePort } from '../../app/free-port.ts';
import { signPayload } from '../../sdk/webhook-signature.ts';
import { eventually } from '../support/fixtures.ts';

const SECRET = 'whsec_exampleexampleexampleexampleexample1234';

describe('examples/webhook-receiver.ts', () => {
  let receiver: ChildProcess;
  let port: number;
  let stdout = '';
  let stderr = '';

  before(async () => {
    // A free port, not a fixed one: other runs on the machine may be running this very test.
    port = await freePort();
    receiver = spawn(process.execPath, ['examples/webhook-receiver.ts'], {
      env: { ...process.env, DISPATCH_WEBHOOK_SECRET: SECRET, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    receiver.stdout?.on('data', (chunk) => (stdout += chunk));
    receiver.stderr?.on('data', (chunk) => (stderr += chunk));
    await eventually(
      () => stdout + stderr,
      (output) => output.includes('listening') || receiver.exitCode !== null,
      { what: 'the example to listen' },
    );
    expect(stdout, stderr).to.include(`listening on http://127.0.0.1:${port}/`);
  });

  after(() => {
    receiver.kill('SIGTERM');
  });

  const event = (name: string) =>
    JSON.stringify({
      id: `evt_${name}`,
      object: 'event',
      type: 'message.delivered',
      created_at: new Date().toISOString(),
      data: { id: `msg_${name}`, status: 'delivered' },
    });
  const post = (body: string, signature = signPayload(body, SECRET, Math.floor(Date.now() / 1000))) =>
    fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json', 'dispatch-signature': signature }, body });
  const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

  it('accepts a signed event once, answers a repeat with 200 without handling it again, and refuses a forged one', async () => {
    const body = event('example');
    const signature = signPayload(body, SECRET, Math.floor(Date.now() / 1000));
    expect((await post(body, signature)).status).to.equal(200);
    expect((await post(body, signature)).status).to.equal(200);
    expect((await post(body.replace('delivered', 'failed'), signature)).status).to.equal(400);
    expect((await post(body, signPayload(body, SECRET, Math.floor(Date.now() / 1000) - 600))).status).to.equal(400);
    // The example logs after answering, so a 200 does not mean its line is written yet. A later
    // event's line on the same stream shows that every earlier line, a repeat's included, is in.
    expect((await post(event('later'))).status).to.equal(200);
    await eventually(
      () => stdout,
      (text) => text.includes('message.delivered for msg_later'),
      { what: 'the later event on stdout' },
    );
    await eventually(
      () => stderr,
      (text) => count(text, /refused a delivery/g) >= 2,
      { what: 'two refusals on stderr' },
    );
    expect(count(stdout, /message\.delivered for msg_example/g)).to.equal(1);
    expect(count(stderr, /refused a delivery/g)).to.equal(2);
  });
});
