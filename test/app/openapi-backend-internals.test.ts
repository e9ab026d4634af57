import { expect } from 'chai';
import { OpenAPIBackend, type Operation, type Request as BackendRequest } from 'openapi-backend';
import { DEFINITION_PATH } from '../../app/api.ts';
import { fastRequestParse, fastRouting } from '../../app/openapi-backend-internals.ts';

/** A path for the operation's template as Express hands it over under /api/v1, each parameter given a value that needs decoding. */
const pathFor = (operation: Operation) => `${operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => `${name}%20x%2Fy`)}`;

describe('the fast request parse', () => {
  let api: OpenAPIBackend;

  before(async () => {
    api = new OpenAPIBackend({ definition: DEFINITION_PATH, quick: true, validate: false });
    await api.init();
  });

  const requests = (operation: Operation): BackendRequest[] => [
    { method: operation.method.toUpperCase(), path: pathFor(operation), headers: { 'content-type': 'application/json', Authorization: 'Bearer x' }, query: {} },
    {
      method: ` ${operation.method.toUpperCase()} `,
      path: `${pathFor(operation)}?ignored=1`,
      headers: { 'X-Mixed-Case': ['a', 'b'] },
      query: { limit: '5', status: ['queued', 'sent'], page: '2' },
      body: { to: '+14155550100', nested: { text: 'hi' } },
    },
    { method: operation.method, path: pathFor(operation).slice(1), headers: {}, query: { to: '' }, body: '{"text":"as text"}' },
    { method: operation.method, path: pathFor(operation), headers: {}, query: {}, body: 'not json' },
  ];

  it('answers what openapi-backend answers for every operation of openapi.yaml', () => {
    const fast = fastRequestParse(api.router);
    const operations = api.router.getOperations();
    let withPathParameters = 0;
    for (const operation of operations) {
      for (const req of requests(operation)) {
        const expected = api.router.parseRequest(req, operation);
        expect(fast(req, operation), `${operation.operationId} ${req.method} ${req.path}`).to.deep.equal(expected);
        if (Object.keys(expected.params).length > 0) withPathParameters++;
      }
    }
    expect(operations.length).to.be.greaterThan(40);
    expect(withPathParameters).to.be.greaterThan(40);
  });

  it('gives validation a query of its own to coerce', () => {
    const fast = fastRequestParse(api.router);
    const operation = api.router.getOperation('listMessages') as Operation;
    const req = { method: 'GET', path: '/messages', headers: {}, query: { status: ['queued'], limit: '5' } };
    const parsed = fast(req, operation);
    (parsed.query as Record<string, unknown>).limit = 5;
    (parsed.query as Record<string, string[]>).status.push('sent');
    expect(req.query).to.deep.equal({ status: ['queued'], limit: '5' });
  });

  it("replaces the router's getOperations and parseRequest, which stay methods a caller may replace, and routes as before", async () => {
    const routed = new OpenAPIBackend({ definition: DEFINITION_PATH, quick: true, validate: false });
    await routed.init();
    const before = routed.router.getOperations().map((operation) => operation.operationId);
    fastRouting(routed);
    expect(routed.router.getOperations().map((operation) => operation.operationId)).to.deep.equal(before);
    expect(routed.router.getOperations()).to.equal(routed.router.getOperations());
    for (const operation of routed.router.getOperations()) {
      expect(routed.router.matchOperation({ method: operation.method, path: pathFor(operation), headers: {} })?.operationId, operation.operationId).to.equal(
        operation.operationId,
      );
    }
  });
});
