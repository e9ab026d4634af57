import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { signPayload } from '../../domain/webhook-signature.ts';

const SECRET = 'whsec_exampleexampleexampleexampleexample1234';
const PORT = 40_123;

describe('examples/webhook-receiver.ts', () => {
  let receiver: ChildProcess;
  let output = '';

  before(async () => {
    receiver = spawn(process.execPath, ['examples/webhook-receiver.ts'], { env: { ...process.env, DISPATCH_WEBHOOK_SECRET: SECRET, PORT: String(PORT) }, stdio: ['ignore', 'pipe', 'pipe'] });
    receiver.stdout?.on('data', (chunk) => (output += chunk));
    receiver.stderr?.on('data', (chunk) => (output += chunk));
    const deadline = Date.now() + 10_000;
    while (!output.includes('listening')) {
      if (Date.now() > deadline) throw new Error(`the example did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  after(() => {
    receiver.kill('SIGTERM');
  });

  const post = (body: string, signature: string) =>
    fetch(`http://127.0.0.1:${PORT}/`, { method: 'POST', headers: { 'content-type': 'application/json', 'dispatch-signature': signature }, body });

  it('accepts a signed event once, answers a repeat with 200 without handling it again, and refuses a forged one', async () => {
    const body = JSON.stringify({ id: 'evt_example', object: 'event', type: 'message.delivered', created_at: new Date().toISOString(), data: { id: 'msg_example', status: 'delivered' } });
    const signature = signPayload(body, SECRET, Math.floor(Date.now() / 1000));
    expect((await post(body, signature)).status).to.equal(200);
    expect((await post(body, signature)).status).to.equal(200);
    expect((await post(body.replace('delivered', 'failed'), signature)).status).to.equal(400);
    expect((await post(body, signPayload(body, SECRET, Math.floor(Date.now() / 1000) - 600))).status).to.equal(400);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(output.match(/message\.delivered for msg_example/g)).to.have.length(1);
    expect(output.match(/refused a delivery/g)).to.have.length(2);
  });
});
