import { Writable } from 'node:stream';
import { expect } from 'chai';
import type { Operation } from 'openapi-backend';
import { createLogger } from '../../app/logger.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { call, expectError, loadContract } from '../support/client.ts';
import { DatabaseRelay } from '../support/database-relay.ts';
import { createOperator } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';
import { documentedOperations } from '../support/operations.ts';
import type { Dispatch } from '../../app/server.ts';

/** A request the document itself calls valid: the operation's first request example, if it has a body. */
function exampleBody(operation: Operation): unknown {
  const content = (operation.requestBody as { content?: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }> } | undefined)
    ?.content?.['application/json'];
  if (!content) return undefined;
  return content.example ?? Object.values(content.examples ?? {})[0]?.value;
}

/** The operation's path with well-formed values that name nothing: only the database can tell. */
function pathOf(operation: Operation): string {
  const parameters = (operation.parameters ?? []) as { name: string; in: string; schema: { type?: string } }[];
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
    if (parameter?.schema.type === 'integer') return '999999';
    return name === 'number' ? '%2B447700900123' : 'zz_000000000000000000000000';
  });
}

describe('a database outage', function () {
  this.timeout(120_000);
  const name = `dispatch_outage_${randomBase62(8).toLowerCase()}`;
  let relay: DatabaseRelay;
  let instance: Dispatch;
  let key: string;
  /**
   * An admin operator's token: the outage reaches its lookup, as it reaches every customer
   * key's, before anything else. ADMIN_TOKEN needs no database, and the calling operator
   * (`GET /admin/operators/current`) would be answered without one.
   */
  let operatorToken: string;
  /** What the instance logged as unexpected: a 500 here means an outage error the mapper did not recognise. */
  const unexpected: string[] = [];

  before(async () => {
    // Its own database, so that the instance's queues and the outage touch nothing of the run's.
    await harness.db.raw(`CREATE DATABASE ${name}`);
    const server = new URL(harness.database.url);
    relay = await DatabaseRelay.start({ host: server.hostname, port: Number(server.port || 5432) });
    const url = new URL(harness.database.url);
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    url.pathname = `/${name}`;
    const lines = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) if (JSON.parse(line).msg === 'unexpected error') unexpected.push(line);
        done();
      },
    });
    instance = await startInstance(url.toString(), {}, createLogger('error', lines));
    const account = await call('POST', '/admin/accounts', { auth: 'admin', baseUrl: instance.baseUrl, body: { email: 'outage@example.com', name: 'Outage' } });
    const created = await call('POST', `/admin/accounts/${account.body.data.id}/api-keys`, {
      auth: 'admin',
      baseUrl: instance.baseUrl,
      body: { name: 'Outage' },
    });
    key = created.body.data.plain_key;
    operatorToken = (await createOperator('admin', instance.baseUrl)).token;
  });

  after(async () => {
    relay?.up();
    await instance?.stop();
    await relay?.close();
    await harness.db.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('answers 503 service_unavailable with Retry-After to every operation while it lasts, then recovers without a restart', async () => {
    const api = await loadContract();
    expect((await call('GET', '/account', { auth: key, baseUrl: instance.baseUrl })).status).to.equal(200);
    relay.down();
    for (const { operationId, method, admin } of documentedOperations()) {
      const operation = api.getOperation(operationId) as Operation;
      const response = await call(method, pathOf(operation), { auth: admin ? operatorToken : key, baseUrl: instance.baseUrl, body: exampleBody(operation) });
      expect(response.status, `${operationId}: ${unexpected.at(-1)}`).to.equal(503);
      expectError(response, 503, 'service_unavailable');
      expect(response.body.error.type, operationId).to.equal('api_error');
      expect(response.headers.get('retry-after'), operationId).to.equal('5');
    }
    const root = instance.baseUrl.replace('/api/v1', '');
    expect((await fetch(`${root}/readyz`)).status).to.equal(503);

    relay.up();
    expect((await call('GET', '/account', { auth: key, baseUrl: instance.baseUrl })).status).to.equal(200);
    expect(
      (await call('POST', '/admin/accounts', { auth: 'admin', baseUrl: instance.baseUrl, body: { email: 'after@example.com', name: 'After' } })).status,
    ).to.equal(201);
    expect((await fetch(`${root}/readyz`)).status).to.equal(200);
  });
});
