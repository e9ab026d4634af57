import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { signPayload } from '../../sdk/webhook-signature.ts';
import { sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const run = promisify(execFile);

/** What the project that installed the tarball runs: a send, and a webhook checked, printed as JSON. */
const USE = `
import { Dispatch, verifyWebhook } from '@dispatch-sms/sdk';
const dispatch = new Dispatch({ apiKey: process.env.KEY, baseUrl: process.env.BASE_URL });
const message = await dispatch.messages.send({ to: '+14155550123', from: 'Dispatch', body: 'From the packed SDK' });
const event = verifyWebhook(process.env.RAW_BODY, process.env.SIGNATURE, process.env.SECRET);
console.log(JSON.stringify({ message: { id: message.id, status: message.status }, event: { id: event.id, type: event.type } }));
`;

describe('the SDK as a package of its own', function () {
  this.timeout(180_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dispatch-sdk-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('packs with npm pack, installs into an empty project, sends a message and verifies a webhook there', async () => {
    await run('npm', ['pack', '--pack-destination', dir], { cwd: resolve('sdk') });
    const [tarball] = (await readdir(dir)).filter((name) => name.endsWith('.tgz'));
    expect(tarball).to.match(/^dispatch-sms-sdk-\d+\.\d+\.\d+\.tgz$/);

    const project = join(dir, 'project');
    await run('mkdir', [project]);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'uses-the-sdk', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball)], { cwd: project });
    await writeFile(join(project, 'use.js'), USE);

    const tenant = await sendingTenant();
    const secret = 'whsec_packed_sdk_test_secret';
    const rawBody = JSON.stringify({ id: 'evt_packed', object: 'event', type: 'message.sent', created_at: new Date().toISOString(), data: {} });
    const { stdout } = await run(process.execPath, ['use.js'], {
      cwd: project,
      env: {
        ...process.env,
        KEY: tenant.key,
        BASE_URL: harness.baseUrl,
        RAW_BODY: rawBody,
        SECRET: secret,
        SIGNATURE: signPayload(rawBody, secret, Math.floor(Date.now() / 1000)),
      },
    });
    const used = JSON.parse(stdout);
    expect(used.message.id).to.match(/^msg_/);
    expect(used.message.status).to.equal('pending');
    expect(used.event).to.deep.equal({ id: 'evt_packed', type: 'message.sent' });
    expect((await harness.db('messages').where({ id: used.message.id }).first())?.account_id).to.equal(tenant.accountId);
  });
});
