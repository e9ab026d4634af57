import { expect } from 'chai';
import { call } from '../support/client.ts';
import { eventually, sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';
import { metricsUrl, routeName, sample, scrape } from '../support/metrics.ts';
import { requirePromtool, runPromtool } from '../support/promtool.ts';

const METRICS_TOKEN = 'metrics-token-0123456789';

describe('GET /metrics', () => {
  it('exposes request, upstream, delivery, queue, message, webhook and ledger figures by route name, with quiet series at 0, and passes promtool check metrics', async function () {
    // It starts a second Dispatch (pg-boss, workers), which may take seconds on a busy machine.
    this.timeout(60_000);
    const tenant = await sendingTenant({ routes: [{ price: 0.01, config: { outcome: 'unavailable' } }, { price: 0.01 }] });
    const [unavailable, healthy] = await Promise.all(tenant.routeIds.map((id) => routeName(id)));
    const before = await scrape();
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Counted' } });
    await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'delivered');
    const reported = (text: string) => sample(text, new RegExp(`^dispatch_delivery_reports_total\\{route="${healthy}",status="delivered"\\}`));
    const latencies = (text: string) => sample(text, new RegExp(`^dispatch_delivery_latency_seconds_count\\{route="${healthy}"\\}`));
    // The report is counted, and its message's latency observed, once stored: just after the message reads delivered.
    const after = await eventually(
      () => scrape(),
      (text) => reported(text) === 1 && latencies(text) === 1,
      { what: 'the delivery report counted' },
    );
    // Database figures are cached for 15 s per process: a fresh process reads them now.
    const fresh = await startInstance(harness.database.url, { METRICS_TOKEN });
    const figures = await scrape(fresh.baseUrl, METRICS_TOKEN).finally(() => fresh.stop());

    const sends = (text: string) => sample(text, /^dispatch_http_request_duration_seconds_count\{operation="sendMessage",method="POST",status="201"\}/) ?? 0;
    expect(sends(after) - sends(before)).to.equal(1);
    expect(sample(after, new RegExp(`^dispatch_upstream_submit_duration_seconds_count\\{route="${healthy}",outcome="accepted"\\}`))).to.equal(1);
    expect(sample(after, new RegExp(`^dispatch_upstream_errors_total\\{route="${unavailable}",code="provider_unavailable"\\}`))).to.equal(1);
    expect(sample(after, new RegExp(`^dispatch_delivery_reports_total\\{route="${healthy}",status="undelivered"\\}`))).to.equal(0);
    expect(sample(figures, new RegExp(`^dispatch_messages_last_24h\\{status="delivered",route="${healthy}"\\}`))).to.be.at.least(1);
    // Known label sets read 0 before anything happens to them, in a process that has done nothing.
    expect(sample(figures, new RegExp(`^dispatch_messages_last_24h\\{status="undelivered",route="${unavailable}"\\}`))).to.equal(0);
    expect(sample(figures, new RegExp(`^dispatch_upstream_submit_duration_seconds_count\\{route="${healthy}",outcome="rejected"\\}`))).to.equal(0);
    expect(sample(figures, new RegExp(`^dispatch_delivery_reports_total\\{route="${healthy}",status="delivered"\\}`))).to.equal(0);
    expect(sample(figures, /^dispatch_queue_jobs\{queue="daily-purge",state="retry"\}/)).to.equal(0);
    expect(sample(figures, /^dispatch_queue_oldest_job_age_seconds\{queue="send-message",state="created"\}/)).to.be.at.least(0);
    expect(sample(figures, /^dispatch_webhook_attempts_total\{result="failed",reason="timeout"\}/)).to.equal(0);
    expect(sample(figures, /^dispatch_webhook_endpoints\{state="disabled"\}/)).to.be.at.least(0);
    expect(sample(figures, /^dispatch_ledger_amount\{kind="debit",currency="USD"\}/)).to.be.below(0);
    expect(figures).to.not.match(/^dispatch_ledger_amount_total/m);
    expect(figures).to.match(/^# TYPE dispatch_delivery_latency_seconds histogram/m);
    // prom-client's default metrics under their standard names.
    expect(figures).to.match(/^process_cpu_seconds_total /m);
    expect(figures).to.not.match(/^dispatch_process_/m);

    const promtool = requirePromtool(this);
    for (const text of [after, figures]) {
      const { code, output } = await runPromtool(promtool, ['check', 'metrics'], text);
      expect(output.trim(), 'promtool check metrics').to.equal('');
      expect(code).to.equal(0);
    }
  });

  it('answers 401 without the bearer METRICS_TOKEN when one is set, and stays open when none is', async function () {
    this.timeout(60_000);
    const guarded = await startInstance(harness.database.url, { METRICS_TOKEN });
    try {
      const url = metricsUrl(guarded.baseUrl);
      const refusals = await Promise.all([
        fetch(url),
        fetch(url, { headers: { authorization: 'Bearer metrics-token-wrong-guess' } }),
        fetch(url, { headers: { authorization: 'Basic eDp5' } }),
      ]);
      for (const refused of refusals) {
        expect(refused.status).to.equal(401);
        expect(refused.headers.get('www-authenticate')).to.equal('Bearer');
        expect(((await refused.json()) as { error: object }).error).to.include({ type: 'authentication_error', code: 'unauthorized' });
      }
      expect(await scrape(guarded.baseUrl, METRICS_TOKEN)).to.match(/^# TYPE dispatch_queue_jobs gauge/m);
    } finally {
      await guarded.stop();
    }
    expect(await scrape()).to.match(/^# TYPE dispatch_queue_jobs gauge/m);
  });
});
