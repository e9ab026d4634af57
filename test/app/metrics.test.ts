import { expect } from 'chai';
import { call } from '../support/client.ts';
import { sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';

const scrape = async (baseUrl = harness.baseUrl) => {
  const response = await fetch(`${baseUrl.replace('/api/v1', '')}/metrics`);
  expect(response.status).to.equal(200);
  expect(response.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  return response.text();
};

/** The value of one sample line, e.g. `name{a="b"} 3`, or 0 when absent. */
const sample = (text: string, pattern: RegExp): number => {
  const line = text.split('\n').find((l) => pattern.test(l));
  return line ? Number(line.split(' ').pop()) : 0;
};

describe('GET /metrics', () => {
  it('exposes request, upstream, queue, message, webhook and ledger figures in Prometheus text format', async function () {
    // It starts a second Dispatch (pg-boss, workers), which may take seconds on a busy machine.
    this.timeout(60_000);
    const tenant = await sendingTenant({ routes: [{ price: 0.01, config: { outcome: 'unavailable' } }, { price: 0.01 }] });
    const [unavailable, healthy] = tenant.routeIds;
    const before = await scrape();
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Counted' } });
    await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    const after = await scrape();
    // Database figures are cached for 15 s per process: a fresh process reads them now.
    const fresh = await startInstance(harness.database.url);
    const figures = await scrape(fresh.baseUrl).finally(() => fresh.stop());

    const sends = (text: string) => sample(text, /^dispatch_http_request_duration_seconds_count\{operation="sendMessage",method="POST",status="201"\}/);
    expect(sends(after) - sends(before)).to.equal(1);
    expect(sample(after, new RegExp(`^dispatch_upstream_submit_duration_seconds_count\\{route="${healthy}",outcome="accepted"\\}`))).to.equal(1);
    expect(sample(after, new RegExp(`^dispatch_upstream_errors_total\\{route="${unavailable}",code="provider_unavailable"\\}`))).to.equal(1);
    expect(sample(figures, new RegExp(`^dispatch_messages_last_24h\\{status="(sent|delivered)",route="${healthy}"\\}`))).to.be.at.least(1);
    expect(figures).to.match(/^dispatch_ledger_amount_total\{kind="debit"\} -?\d/m);
    expect(figures).to.match(/^# TYPE dispatch_queue_jobs gauge/m);
    expect(after).to.match(/^# TYPE dispatch_webhook_attempts_total counter/m);
    expect(after).to.match(/^dispatch_process_cpu_seconds_total /m);
  });
});
