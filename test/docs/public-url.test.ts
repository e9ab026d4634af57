import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import yaml from 'js-yaml';
import { DOCUMENTED_ORIGIN } from '../../app/docs.ts';
import type { Dispatch } from '../../app/server.ts';
import { startInstance } from '../support/harness.ts';
import { siblingDatabase } from '../support/sibling-database.ts';

const run = promisify(execFile);
/** @hey-api/openapi-ts's CLI, run by this Node (the .bin shim's shebang would pick the system Node). */
const OPENAPI_TS = fileURLToPath(new URL('../../node_modules/@hey-api/openapi-ts/bin/run.js', import.meta.url));
/** Distinctive: a host and a path prefix no default could produce. */
const PUBLIC_URL = 'https://sms.acme-h6.example/dispatch';

describe('the served API reference on PUBLIC_URL', function () {
  this.timeout(60_000);
  let sibling: Awaited<ReturnType<typeof siblingDatabase>>;
  let dispatch: Dispatch;
  let work: string;
  const origin = () => new URL(dispatch.baseUrl).origin;

  before(async () => {
    // A database of its own: an instance with another PUBLIC_URL on the run's database would take
    // other tests' send jobs and hand their providers callback URLs on a host that does not exist.
    sibling = await siblingDatabase();
    dispatch = await startInstance(sibling.url, { PUBLIC_URL: `${PUBLIC_URL}/` });
    work = await mkdtemp(join(tmpdir(), 'dispatch-public-url-'));
  });

  after(async () => {
    await dispatch?.stop();
    await sibling?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('GET /openapi.yaml names PUBLIC_URL as its server, in its links and in every code sample, and never the documented default', async () => {
    const text = await (await fetch(`${origin()}/openapi.yaml`)).text();
    expect(text).to.not.include(DOCUMENTED_ORIGIN);
    const document = yaml.load(text) as {
      servers: { url: string }[];
      info: { contact: { url: string } };
      paths: Record<string, Record<string, { 'x-codeSamples'?: { source: string }[] }>>;
    };
    expect(document.servers.map((server) => server.url)).to.deep.equal([`${PUBLIC_URL}/api/v1`]);
    expect(document.info.contact.url).to.equal(`${PUBLIC_URL}/docs`);
    const samples = Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation['x-codeSamples'] ?? []));
    expect(samples.length).to.be.greaterThan(0);
    for (const sample of samples) expect(sample.source).to.include(`${PUBLIC_URL}/api/v1/`);
  });

  it('GET /docs renders the same: PUBLIC_URL and never the documented default', async () => {
    const html = await (await fetch(`${origin()}/docs`)).text();
    expect(html).to.include(`${PUBLIC_URL}/api/v1`);
    expect(html).to.not.include(DOCUMENTED_ORIGIN);
  });

  it('a client generated from the served document by @hey-api/openapi-ts calls PUBLIC_URL', async () => {
    const output = join(work, 'client');
    await run(process.execPath, [OPENAPI_TS, '--input', `${origin()}/openapi.yaml`, '--output', output], { env: { ...process.env, NO_COLOR: '1' } });
    const client = await readFile(join(output, 'client.gen.ts'), 'utf8');
    const baseUrls = [...client.matchAll(/baseUrl: '([^']*)'/g)].map((match) => match[1]);
    expect(baseUrls, `the baseUrl of the generated client.gen.ts:\n${client}`).to.deep.equal([`${PUBLIC_URL}/api/v1`]);
  });
});
