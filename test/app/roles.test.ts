import { expect } from 'chai';
import type { Dispatch } from '../../app/server.ts';
import { call, checkUnrouted } from '../support/client.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { startInstance } from '../support/harness.ts';
import { routeName, sample, scrape } from '../support/metrics.ts';
import { siblingDatabase } from '../support/sibling-database.ts';

const originOf = (dispatch: Dispatch) => new URL(dispatch.baseUrl).origin;
const SENDS = Array.from({ length: 8 }, (_, i) => `+1415555012${i}`);

describe('DISPATCH_ROLE: an API process and a worker process on one database', function () {
  // Two instances of Dispatch start (pg-boss, migrations), which may take seconds on a busy machine.
  this.timeout(60_000);
  let sibling: Awaited<ReturnType<typeof siblingDatabase>>;
  let api: Dispatch;
  let worker: Dispatch;
  let provider: FakeHttpProvider;

  before(async () => {
    // A database of their own: the harness's instance works every job of the run's database.
    sibling = await siblingDatabase();
    api = await startInstance(sibling.url, { DISPATCH_ROLE: 'api' });
    worker = await startInstance(sibling.url, { DISPATCH_ROLE: 'worker', PUBLIC_URL: originOf(api) });
    provider = await FakeHttpProvider.start();
  });

  after(async () => {
    await provider?.stop();
    await worker?.stop();
    await api?.stop();
    await sibling?.drop();
  });

  it("accepts sends in the API process, submits them from the worker with the API's report URL, and each process counts what it did", async () => {
    const tenant = await sendingTenant({ baseUrl: api.baseUrl, routes: [{ provider: 'http', config: { url: provider.url, token: 'secret-token' } }] });
    const route = await routeName(tenant.routeIds[0], api.baseUrl);
    provider.behave((body) => ({ accept: true, id: `split-${body.to.slice(-1)}` }));
    // One at a time, so that each is a job of its own: were the API process working jobs too, it
    // would take some of them.
    const sent = [];
    for (const to of SENDS) {
      const response = await call('POST', '/messages/send', { auth: tenant.key, baseUrl: api.baseUrl, body: { to, from: 'Dispatch', body: 'Split' } });
      expect(response.status, JSON.stringify(response.body)).to.equal(201);
      sent.push(await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending'));
    }
    expect(sent.map((m) => [m.status, m.provider_message_id])).to.deep.equal(SENDS.map((_, i) => ['sent', `split-${i}`]));

    // The worker hands the provider the API's address: the report reaches the process that serves callbacks.
    const { dlr_url: dlrUrl } = provider.requests[0].body;
    expect(dlrUrl.startsWith(`${originOf(api)}/callbacks/dlr/`), dlrUrl).to.equal(true);
    expect((await provider.postReport(dlrUrl, { id: 'split-0', status: 'delivered', timestamp: new Date().toISOString() })).status).to.equal(200);
    await waitForMessage(tenant, sent[0].id, (m) => m.status === 'delivered');

    const submitted = new RegExp(`^dispatch_upstream_submit_duration_seconds_count\\{route="${route}",outcome="accepted"\\}`);
    const reported = new RegExp(`^dispatch_delivery_reports_total\\{route="${route}",status="delivered"\\}`);
    const [apiMetrics, workerMetrics] = [await scrape(api.baseUrl), await scrape(worker.baseUrl)];
    expect(sample(workerMetrics, submitted), 'the worker submitted them all').to.equal(SENDS.length);
    expect(sample(apiMetrics, submitted) ?? 0, 'the API process submitted nothing').to.equal(0);
    expect(sample(apiMetrics, reported), 'the API process received the report').to.equal(1);
    expect(sample(workerMetrics, /^dispatch_http_request_duration_seconds_count\{operation="sendMessage"/) ?? 0, 'the worker served no send').to.equal(0);
  });

  it("serves a worker's probes and metrics, and nothing of the API from it", async () => {
    const origin = originOf(worker);
    expect((await fetch(`${origin}/healthz`)).status).to.equal(200);
    const ready = await fetch(`${origin}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).to.deep.equal({ status: 200, body: { status: 'ready' } });
    for (const path of ['/api/v1/account', '/openapi.yaml', '/callbacks/dlr/anything']) {
      const response = await fetch(`${origin}${path}`);
      const body = await checkUnrouted(`GET ${path} on a worker`, response);
      expect({ path, status: response.status, code: body.error.code }).to.deep.equal({ path, status: 404, code: 'not_found' });
    }
  });
});
