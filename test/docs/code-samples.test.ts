import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import yaml from 'js-yaml';
import { CREDENTIAL_VARIABLES } from '../../scripts/code-samples.ts';
import { call, loadContract } from '../support/client.ts';
import { addRoute, approvedSender, createAdminKey, sendingTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { holdNumber, randomHandset, simulateInbound } from '../support/inbound.ts';

// The x-codeSamples of the served document (scripts/code-samples.ts, built by `npm run docs`),
// run as a reader would run them against the live Dispatch of the run: the served document
// names its address (PUBLIC_URL is unset), so only the credential and the ids are filled in.

const run = promisify(execFile);
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const TYPE_ROOTS = fileURLToPath(new URL('../../node_modules/@types', import.meta.url));
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

interface Sample {
  lang: string;
  source: string;
}

/** The parts of the served document these tests read. */
interface DocumentParameter {
  $ref?: string;
  in: string;
  example?: unknown;
}
interface DocumentOperation {
  operationId: string;
  parameters?: DocumentParameter[];
  responses: Record<string, unknown>;
  'x-codeSamples'?: Sample[];
}
type PathItem = { parameters?: DocumentParameter[] } & Record<string, unknown>;

interface ServedOperation {
  operationId: string;
  method: string;
  path: string;
  /** The lowest 2xx the operation declares: what its sample must answer. */
  success: number;
  /** The path parameters' documented examples, as the samples carry them. */
  examples: string[];
  samples: Sample[];
}

async function servedOperations(): Promise<ServedOperation[]> {
  const text = await (await fetch(`${new URL(harness.baseUrl).origin}/openapi.yaml`)).text();
  const document = yaml.load(text) as { paths: Record<string, PathItem>; components: { parameters: Record<string, DocumentParameter> } };
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, value]) => {
        const operation = value as DocumentOperation;
        const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((parameter) =>
          parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()!] : parameter,
        );
        return {
          operationId: operation.operationId,
          method,
          path,
          success: Math.min(
            ...Object.keys(operation.responses)
              .map(Number)
              .filter((status) => status >= 200 && status < 300),
          ),
          examples: parameters.filter((parameter) => parameter.in === 'path').map((parameter) => encodeURIComponent(String(parameter.example))),
          samples: operation['x-codeSamples'] ?? [],
        };
      }),
  );
  // Deleting runs last, so that nothing an operation after it needs is gone.
  return [...operations.filter((operation) => operation.method !== 'delete'), ...operations.filter((operation) => operation.method === 'delete')];
}

/** An account holding one of everything a sample's path can name, by id prefix. */
async function fixtures(): Promise<{ tenant: Tenant; ids: Record<string, string> }> {
  const tenant = await sendingTenant({ balance: 100 });
  // The send examples' sender ID.
  await approvedSender(tenant, 'AcmeShip');
  // Scheduled an hour ahead, so that the cancel samples find them cancelable (a repeat answers the same).
  const sendAt = new Date(Date.now() + 3_600_000).toISOString();
  const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'AcmeShip', body: 'Fixture', send_at: sendAt } });
  expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
  const bulk = await call('POST', '/messages/bulk', {
    auth: tenant.key,
    body: { recipients: ['+14155550123'], from: 'AcmeShip', body: 'Fixture', send_at: sendAt },
  });
  expect(bulk.status, JSON.stringify(bulk.body)).to.equal(201);
  const sender = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: 'Fixture' } });
  expect(sender.status, JSON.stringify(sender.body)).to.equal(201);
  const endpoint = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: 'https://hooks.acme.example/fixture' } });
  expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
  // An event of the account, for the resend sample: the endpoint's test event.
  const event = await call('POST', `/webhooks/${endpoint.body.data.id}/test`, { auth: tenant.key });
  expect(event.status, JSON.stringify(event.body)).to.equal(202);
  // An inbound message, on a simulator route of its own after the sending one.
  const inbound = await simulateInbound(await addRoute(tenant.accountId, 1), { from: randomHandset(), to: await holdNumber(tenant), body: 'Hello' });
  // A key of its own to revoke: the tenant's key runs the samples after it.
  const spare = await createAdminKey(tenant.accountId, { name: 'Revoked by a code sample' });
  return {
    tenant,
    ids: {
      msg: sent.body.data.id,
      bulk: bulk.body.data.bulk_id!,
      inb: inbound.id,
      snd: sender.body.data.id,
      key: spare.id,
      whe: endpoint.body.data.id,
      evt: event.body.data.id,
    },
  };
}

/** The sample with each path parameter's example replaced by the fixture of its id prefix. */
function filledIn(operation: ServedOperation, source: string, ids: Record<string, string>): string {
  let filled = source;
  for (const example of operation.examples) {
    const prefix = /^([a-z]+)_/.exec(example)?.[1];
    // Examples that are no id (an opt-out's number) are valid as they stand.
    if (prefix === undefined) continue;
    expect(ids, `${operation.operationId}: no fixture for ids ${prefix}_... (add one to this test)`).to.have.property(prefix);
    filled = filled.replaceAll(example, ids[prefix]);
  }
  return filled;
}

/** Before the deletes: the opt-out the deleting sample's example names, whatever ran before. */
async function optOutOfTheExample(tenant: Tenant, operations: ServedOperation[]): Promise<void> {
  const numbers = operations
    .filter((operation) => operation.method === 'delete')
    .flatMap((operation) => operation.examples.map(decodeURIComponent).filter((example) => example.startsWith('+')));
  if (numbers.length === 0) return;
  const created = await call('POST', '/opt-outs/create', { auth: tenant.key, body: { numbers } });
  expect(created.status, JSON.stringify(created.body)).to.equal(200);
}

/** Runs `each` over the operations in order, the deletes' precondition set up before the first of them. */
async function inOrder(tenant: Tenant, operations: ServedOperation[], each: (operation: ServedOperation) => Promise<void>): Promise<void> {
  let deleting = false;
  for (const operation of operations) {
    if (operation.method === 'delete' && !deleting) {
      deleting = true;
      await optOutOfTheExample(tenant, operations);
    }
    await each(operation);
  }
}

function sampleOf(operation: ServedOperation, lang: string): string {
  const sample = operation.samples.find((candidate) => candidate.lang === lang);
  expect(sample, `${operation.operationId} has no ${lang} sample`).to.not.equal(undefined);
  return sample!.source;
}

describe('the code samples of the served document', function () {
  this.timeout(120_000);
  let operations: ServedOperation[];
  let work: string;
  const env = (tenant: Tenant) => ({ ...process.env, [CREDENTIAL_VARIABLES.apiKey]: tenant.key });

  before(async () => {
    // Compiled first: compiling blocks this process, server included, past the keep-alive of the
    // connection the next fetch would open, and its first reuse would meet its close.
    await loadContract();
    operations = await servedOperations();
    work = await mkdtemp(join(tmpdir(), 'dispatch-samples-'));
  });

  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('every operation has a curl and a TypeScript sample on the served origin', () => {
    expect(operations.map((operation) => operation.operationId)).to.include.members(['sendMessage', 'getMessage', 'deleteOptOut']);
    const origin = new URL(harness.baseUrl).origin;
    for (const operation of operations) {
      expect(
        operation.samples.map((sample) => sample.lang),
        operation.operationId,
      ).to.deep.equal(['Shell', 'TypeScript']);
      for (const sample of operation.samples) expect(sample.source, operation.operationId).to.include(`${origin}/api/v1/`);
    }
  });

  it("every curl sample, run by bash, answers its operation's success status", async () => {
    const { tenant, ids } = await fixtures();
    let ran = 0;
    await inOrder(tenant, operations, async (operation) => {
      // As written, then curl's own options: quiet, and the status on a line of its own at the end.
      const script = `${filledIn(operation, sampleOf(operation, 'Shell'), ids)} -sS -w '\\n%{http_code}'`;
      const { stdout } = await run('bash', ['-e', '-c', script], { env: env(tenant) });
      const lines = stdout.trimEnd().split('\n');
      const status = Number(lines.pop());
      const body = JSON.parse(lines.join('\n'));
      expect(status, `${operation.operationId}'s curl sample:\n${script}\nanswered ${JSON.stringify(body)}`).to.equal(operation.success);
      expect(body.success, operation.operationId).to.equal(true);
      ran += 1;
    });
    expect(ran).to.equal(operations.length);
  });

  it('the TypeScript samples type-check (tsc --strict) as a module of their own', async () => {
    const file = join(work, 'samples.mts');
    const functions = operations.map(
      (operation) => `export async function ${operation.operationId}(): Promise<void> {\n${sampleOf(operation, 'TypeScript').replace(/^/gm, '  ')}\n}\n`,
    );
    await writeFile(file, functions.join('\n'));
    const args = [
      '--noEmit',
      '--strict',
      '--target',
      'es2024',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--types',
      'node',
      '--typeRoots',
      TYPE_ROOTS,
      file,
    ];
    const checked = await run(process.execPath, [TSC, ...args]).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked, `tsc on the TypeScript samples (${file})`).to.equal('');
  });

  it("every TypeScript sample, run by Node, answers its operation's success status", async () => {
    const { tenant, ids } = await fixtures();
    await inOrder(tenant, operations, async (operation) => {
      const file = join(work, `${operation.operationId}.mts`);
      await writeFile(file, filledIn(operation, sampleOf(operation, 'TypeScript'), ids));
      const { stdout } = await run(process.execPath, [file], { env: env(tenant) });
      const [, status, answer] = /^(\d{3}) ([\s\S]*)$/.exec(stdout.trim()) ?? [];
      expect(Number(status), `${operation.operationId}'s TypeScript sample printed:\n${stdout}`).to.equal(operation.success);
      expect(JSON.parse(answer).success, operation.operationId).to.equal(true);
    });
  });
});
