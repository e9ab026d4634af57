import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import yaml from 'js-yaml';
import { DOCUMENTED_ORIGIN } from '../../app/docs.ts';
import { ADMIN_TAG, PUBLIC_DIR, SOURCE_PATH, TITLE, buildPublicDocs } from '../../scripts/build-docs.ts';
import { harness } from '../support/harness.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const COMMITTED_YAML = join(PUBLIC_DIR, 'openapi.yaml');
const COMMITTED_HTML = join(PUBLIC_DIR, 'index.html');
const STALE = 'run `npm run docs` and commit docs/public/';

interface Document {
  tags?: { name: string }[];
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: Record<string, Record<string, unknown>>;
}

/** A schema of the document, as far as these checks read it (a part that is missing fails the check that reads it). */
interface Schema {
  description: string;
  enum: string[];
  $ref: string;
  properties: Record<string, Schema>;
  items: Schema & { oneOf: { $ref: string }[] };
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  internal: boolean;
}

function operationsOf(document: Document): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({
        method,
        path,
        operationId: String(operation.operationId),
        summary: String(operation.summary),
        tags: (operation.tags as string[] | undefined) ?? [],
        internal: operation['x-internal'] === true,
      })),
  );
}

/** Every node of a parsed document, with its JSON pointer. */
function* walk(node: unknown, pointer = '#'): Generator<[string, unknown]> {
  yield [pointer, node];
  if (typeof node !== 'object' || node === null) return;
  for (const [key, child] of Object.entries(node)) yield* walk(child, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
}

/** Where two texts first differ, to point at the stale part without printing megabytes. */
function firstDifference(committed: string, fresh: string): string {
  const a = committed.split('\n');
  const b = fresh.split('\n');
  const line = a.findIndex((text, index) => text !== b[index]);
  const at = line === -1 ? a.length : line;
  return `first difference at line ${at + 1}:\n  committed: ${JSON.stringify(a[at]?.slice(0, 160))}\n  rebuilt:   ${JSON.stringify(b[at]?.slice(0, 160))}`;
}

/** The document Redoc hydrates from, inlined in the page by `redocly build-docs`. */
function inlinedDefinition(html: string): unknown {
  const match = /const __redoc_definition = (.*);\n/.exec(html);
  expect(match, 'index.html inlines no __redoc_definition (did the Redocly page template change?)').to.not.equal(null);
  return JSON.parse(match![1]);
}

/** A plain GET, headers as given. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

const origin = () => new URL(harness.baseUrl).origin;

describe('the public API reference (docs/public/)', () => {
  let source: Document;
  let committedYaml: string;
  let committedHtml: string;
  let publicDocument: Document;
  let fresh: { yaml: string; html: string };

  before(async function () {
    this.timeout(30_000);
    source = yaml.load(await readFile(SOURCE_PATH, 'utf8')) as Document;
    committedYaml = await readFile(COMMITTED_YAML, 'utf8');
    committedHtml = await readFile(COMMITTED_HTML, 'utf8');
    publicDocument = yaml.load(committedYaml) as Document;
    const dir = await mkdtemp(join(tmpdir(), 'dispatch-docs-test-'));
    try {
      const built = await buildPublicDocs(dir);
      fresh = { yaml: await readFile(built.yamlPath, 'utf8'), html: await readFile(built.htmlPath, 'utf8') };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('is up to date', () => {
    it('docs/public/openapi.yaml is what `npm run docs` makes from openapi.yaml now', () => {
      expect(committedYaml === fresh.yaml, `docs/public/openapi.yaml is stale: ${STALE}\n${firstDifference(committedYaml, fresh.yaml)}`).to.equal(true);
    });

    it('docs/public/index.html is what `npm run docs` makes now, and renders the public document', () => {
      expect(inlinedDefinition(committedHtml), `docs/public/index.html documents another document than docs/public/openapi.yaml: ${STALE}`).to.deep.equal(
        publicDocument,
      );
      expect(committedHtml === fresh.html, `docs/public/index.html is stale: ${STALE}`).to.equal(true);
      expect(committedHtml).to.include(`<title>${TITLE}</title>`);
    });
  });

  describe('holds the public API only', () => {
    it('has every customer operation of openapi.yaml, unchanged, and nothing else', () => {
      const customer = operationsOf(source).filter((operation) => !operation.internal);
      expect(customer.length).to.be.greaterThan(0);
      expect(customer.map((operation) => operation.operationId)).to.include.members(['sendMessage', 'sendBulkMessages', 'getMessage', 'getBalance']);
      expect(operationsOf(publicDocument)).to.deep.equal(customer);
      for (const operation of customer) {
        const { 'x-codeSamples': samples, ...rest } = publicDocument.paths[operation.path][operation.method];
        expect(rest, `${operation.operationId} differs from openapi.yaml`).to.deep.equal(source.paths[operation.path][operation.method]);
        // The samples are the build's (test/docs/code-samples.test.ts runs them): curl, then TypeScript.
        expect(
          (samples as { lang: string }[] | undefined)?.map((sample) => sample.lang),
          `${operation.operationId}'s x-codeSamples`,
        ).to.deep.equal(['Shell', 'TypeScript']);
      }
    });

    it('marks every admin operation of openapi.yaml x-internal, so that none can leak', () => {
      const admin = operationsOf(source).filter((operation) => operation.path.startsWith('/admin/') || operation.tags.includes(ADMIN_TAG));
      expect(admin.length).to.be.greaterThan(0);
      expect(
        admin.filter((operation) => !operation.internal).map((operation) => operation.operationId),
        'admin operations without x-internal: true',
      ).to.deep.equal([]);
    });

    it('has no path under /admin, no x-internal and no Admin tag', () => {
      expect(Object.keys(publicDocument.paths).filter((path) => path === '/admin' || path.startsWith('/admin/'))).to.deep.equal([]);
      const internal = [...walk(publicDocument)]
        .filter(([, node]) => typeof node === 'object' && node !== null && 'x-internal' in node)
        .map(([pointer]) => pointer);
      expect(internal, 'nodes carrying x-internal').to.deep.equal([]);
      expect((publicDocument.tags ?? []).map((tag) => tag.name)).to.not.include(ADMIN_TAG);
      expect(operationsOf(publicDocument).filter((operation) => operation.tags.includes(ADMIN_TAG))).to.deep.equal([]);
    });

    it('has no component, security scheme or tag that only admin operations used', () => {
      const nodes = [...walk(publicDocument)];
      const referenced = new Set(
        nodes.flatMap(([, node]) =>
          typeof node === 'object' && node !== null && typeof (node as { $ref?: unknown }).$ref === 'string' ? [(node as { $ref: string }).$ref] : [],
        ),
      );
      const schemes = new Set(
        nodes.flatMap(([pointer, node]) =>
          /\/security$/.test(pointer) && Array.isArray(node) ? node.flatMap((requirement: Record<string, unknown>) => Object.keys(requirement)) : [],
        ),
      );
      const unused = Object.entries(publicDocument.components ?? {}).flatMap(([type, members]) =>
        Object.keys(members)
          .map((name) => `#/components/${type}/${name}`)
          .filter((ref) => (type === 'securitySchemes' ? !schemes.has(ref.split('/').pop()!) : !referenced.has(ref))),
      );
      expect(unused, 'unused components').to.deep.equal([]);
      const used = new Set(operationsOf(publicDocument).flatMap((operation) => operation.tags));
      expect(
        (publicDocument.tags ?? []).map((tag) => tag.name).filter((name) => !used.has(name)),
        'tags no operation uses',
      ).to.deep.equal([]);
    });
  });

  describe('documents two-way messaging and opt-outs (issue 10)', () => {
    const schemas = () => (publicDocument.components?.schemas ?? {}) as Record<string, Schema>;

    it('has the inbound-message, opt-out and keyword operations under their tags, and none of their admin operations', () => {
      const operations = operationsOf(publicDocument);
      const tagOf = Object.fromEntries(operations.map((operation) => [operation.operationId, operation.tags.join()]));
      expect(tagOf).to.include({
        listInboundMessages: 'Inbound messages',
        getInboundMessage: 'Inbound messages',
        listOptOuts: 'Opt-outs',
        createOptOuts: 'Opt-outs',
        deleteOptOut: 'Opt-outs',
        getKeywordSettings: 'Opt-outs',
        updateKeywordSettings: 'Opt-outs',
      });
      const ids = operations.map((operation) => operation.operationId);
      expect(ids).to.not.include.members(['adminSimulateInboundMessage', 'adminListOptOuts', 'adminListInboundMessages']);
      expect(operationsOf(source).map((operation) => operation.operationId)).to.include.members([
        'adminSimulateInboundMessage',
        'adminListOptOuts',
        'adminListInboundMessages',
      ]);
      expect(Object.keys(schemas())).to.not.include.members(['AdminInboundMessage', 'AdminOptOut', 'SimulatedInboundRequest']);
    });

    it('has the new event types, each with its data, in the events list and the webhook subscriptions, and says types are an open set', () => {
      expect(schemas().InboundMessageEvent.properties.type.enum).to.deep.equal(['message.received']);
      expect(schemas().InboundMessageEvent.properties.data.$ref).to.equal('#/components/schemas/InboundMessage');
      expect(schemas().OptOutEvent.properties.type.enum).to.deep.equal(['recipient.opted_out', 'recipient.opted_in']);
      expect(schemas().OptOutEvent.properties.data.$ref).to.equal('#/components/schemas/OptOut');
      expect(schemas().EventPageEnvelope.properties.data.items.oneOf.map((item: { $ref: string }) => item.$ref)).to.have.members(
        ['Event', 'OptOutEvent', 'InboundMessageEvent', 'WebhookTestEvent', 'LowBalanceEvent'].map((name) => `#/components/schemas/${name}`),
      );
      const newTypes = ['message.received', 'recipient.opted_out', 'recipient.opted_in'];
      expect(schemas().CreateWebhookEndpointRequest.properties.events.items.enum).to.include.members(['*', ...newTypes]);
      expect((publicDocument.components?.parameters as Record<string, { schema: Schema }>).EventTypeFilter.schema.enum).to.include.members(['*', ...newTypes]);
      expect(schemas().Event.description).to.include('open set').and.include('may ignore');
    });
  });

  describe('is served', () => {
    it('GET /openapi.yaml answers the public document as YAML, revalidated through its ETag', async () => {
      const response = await fetch(`${origin()}/openapi.yaml`);
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^(application\/yaml|text\/yaml; charset=utf-8)$/);
      expect(response.headers.get('cache-control')).to.equal('public, no-cache');
      const etag = response.headers.get('etag');
      expect(etag).to.be.a('string');
      // PUBLIC_URL is unset in the harness: the document names the address Dispatch listens on.
      expect(
        (await response.text()) === committedYaml.replaceAll(DOCUMENTED_ORIGIN, origin()),
        'GET /openapi.yaml is not docs/public/openapi.yaml on this origin',
      ).to.equal(true);

      // Not through fetch: it sends Cache-Control: no-cache with a conditional header, which
      // asks for a full answer.
      const again = await get(`${origin()}/openapi.yaml`, { 'If-None-Match': etag! });
      expect(again.status).to.equal(304);
      expect(again.body).to.equal('');
    });

    it('GET /docs answers the Redoc page as HTML, compressed for clients that accept gzip', async () => {
      const response = await fetch(`${origin()}/docs`, { headers: { 'Accept-Encoding': 'gzip' } });
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(response.headers.get('content-encoding')).to.equal('gzip');
      expect(response.headers.get('vary')).to.include('Accept-Encoding');
      expect(response.headers.get('cache-control')).to.equal('public, no-cache');
      const servedHtml = committedHtml.replaceAll(DOCUMENTED_ORIGIN, origin());
      expect((await response.text()) === servedHtml, 'GET /docs is not docs/public/index.html on this origin').to.equal(true);

      const plain = await fetch(`${origin()}/docs`, { headers: { 'Accept-Encoding': 'identity' } });
      expect(plain.headers.get('content-encoding')).to.equal(null);
      expect(Number(plain.headers.get('content-length'))).to.equal(Buffer.byteLength(servedHtml));
      await plain.arrayBuffer();
    });
  });
});
