import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePort } from '../../app/free-port.ts';
import { call } from '../support/client.ts';
import { eventually } from '../support/fixtures.ts';

const run = promisify(execFile);
const docker = (...args: string[]) => run('docker', args, { maxBuffer: 64 * 1024 * 1024 });

// What the files say, checked where no container runtime is: a pinned slim Node 24 base with one
// Node in it, Node as PID 1, a health check, and compose services that are checked and restarted.
describe('the Dockerfile and compose.yaml', () => {
  it('build on a pinned slim Node 24 base, drop the node package, run Node as PID 1 and check health', async () => {
    const dockerfile = await readFile('Dockerfile', 'utf8');
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(base).to.match(/^node:24\.\d+\.\d+-\w+-slim$/);
    expect(base?.split(':')[1].split('-')[0]).to.equal(JSON.parse(await readFile('node_modules/node/package.json', 'utf8')).version);
    expect(dockerfile.match(/^FROM .*/gm)).to.deep.equal(['FROM ${NODE_IMAGE} AS deps', 'FROM ${NODE_IMAGE}']);
    expect(dockerfile).to.match(/rm -rf node_modules\/node node_modules\/\.bin\/node/);
    expect(dockerfile).to.match(/^CMD \["node", "app\/main\.ts"\]$/m);
    expect(dockerfile).to.match(/^HEALTHCHECK .*\/readyz/ms);
  });

  it('gives every compose service a health check and a restart policy', async () => {
    const compose = (await import('js-yaml')).load(await readFile('compose.yaml', 'utf8')) as {
      services: Record<string, { healthcheck?: unknown; restart?: string; init?: boolean }>;
    };
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.healthcheck, name).to.be.an('object');
      expect(service.restart, name).to.equal('unless-stopped');
      expect(service.init, name).to.equal(undefined);
    }
  });
});

// The Dockerfile's image runs the quick start: `docker run -p PORT:3000 dispatch` (the embedded
// PostgreSQL under /data, as user node), then a send with the demo key is delivered.
describe('the Docker image', function () {
  this.timeout(900_000);
  const tag = `dispatch-test-${randomBytes(6).toString('hex')}`;
  let container: string | undefined;
  let built = false;

  before(async function () {
    const reason = await docker('info').then(
      () => undefined,
      (error: { stderr?: string; message: string }) => (error.stderr || error.message).trim().split('\n').pop(),
    );
    if (reason !== undefined) {
      console.log(`    skipped: no working container runtime here (\`docker info\`: ${reason})`);
      this.skip();
    }
  });

  after(async () => {
    if (container) await docker('rm', '-f', container).catch(() => undefined);
    if (built) await docker('rmi', '-f', tag).catch(() => undefined);
  });

  it('builds, and runs the quick start: the demo key sends a message that is delivered', async () => {
    await docker('build', '--tag', tag, '.');
    built = true;
    const { stdout: user } = await docker('image', 'inspect', '--format', '{{.Config.User}}', tag);
    expect(user.trim(), 'the image runs as a non-root user').to.equal('node');

    const port = await freePort();
    const { stdout } = await docker('run', '--detach', '--publish', `127.0.0.1:${port}:3000`, '--env', `PUBLIC_URL=http://127.0.0.1:${port}`, tag);
    container = stdout.trim();
    const logs = await eventually(
      async () => {
        const { stdout: out, stderr } = await docker('logs', container!);
        return out + stderr;
      },
      (text) => /API key:\s+ds_live_\w+/.test(text),
      { timeoutMs: 120_000, what: 'the demo banner in the container logs' },
    );
    const key = /API key:\s+(ds_live_\w+)/.exec(logs)![1];
    const baseUrl = `http://127.0.0.1:${port}/api/v1`;

    const sent = await call('POST', '/messages/send', { auth: key, baseUrl, body: { to: '+14155550123', from: 'Dispatch', body: 'Hello from the container' } });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    await eventually(
      async () => (await call('GET', `/messages/${sent.body.data.id}`, { auth: key, baseUrl })).body.data,
      (message) => message.status === 'delivered',
      {
        what: 'the message sent in the container to be delivered',
      },
    );
  });
});
