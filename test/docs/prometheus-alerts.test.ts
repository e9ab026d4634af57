import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import yaml from 'js-yaml';
import { harness } from '../support/harness.ts';
import { exposedMetric, exposedTypes, requirePromtool, runPromtool } from '../support/promtool.ts';

const RULES = fileURLToPath(new URL('../../docs/prometheus-alerts.yaml', import.meta.url));

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const rules = async (): Promise<Rule[]> => (yaml.load(await readFile(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);

/**
 * promtool's unit tests of the rules: for each alert, series that must make it fire and series
 * that must not (https://prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules/).
 * promtool compares the rendered annotations too, so their templates are tested with them.
 */
const UNIT_TESTS = [
  {
    name: 'a route whose delivered share falls from 95 % to 20 % fires; a steady route does not',
    interval: '5m',
    input_series: [
      // A day at 100 delivered and 5 undelivered per 5 minutes, then 20 delivered and 80 undelivered.
      { series: 'dispatch_delivery_reports_total{route="failing",status="delivered",instance="a"}', values: '0+100x288 28820+20x20' },
      { series: 'dispatch_delivery_reports_total{route="failing",status="undelivered",instance="a"}', values: '0+5x288 1520+80x20' },
      { series: 'dispatch_delivery_reports_total{route="steady",status="delivered",instance="a"}', values: '0+100x308' },
      { series: 'dispatch_delivery_reports_total{route="steady",status="undelivered",instance="a"}', values: '0+5x308' },
    ],
    alert_rule_test: [
      { eval_time: '1445m', alertname: 'DispatchDeliveryRateDrop', exp_alerts: [] },
      {
        eval_time: '1530m',
        alertname: 'DispatchDeliveryRateDrop',
        exp_alerts: [
          {
            exp_labels: { severity: 'warning', route: 'failing' },
            exp_annotations: {
              summary: 'Delivery rate of route failing dropped',
              description:
                "Only 20% of the delivery reports of route failing say delivered over the last 30 minutes, well below its rate of the day before. The carrier behind the route may be failing: check the route's undelivered messages (their error) and consider deactivating it so that messages fail over.",
            },
          },
        ],
      },
    ],
  },
  {
    name: 'a queue whose oldest due job waits past 5 minutes fires; one that keeps up does not',
    interval: '1m',
    input_series: [
      { series: 'dispatch_queue_oldest_job_age_seconds{queue="send-message",state="created",instance="a"}', values: '0+60x30' },
      { series: 'dispatch_queue_oldest_job_age_seconds{queue="send-message",state="created",instance="b"}', values: '0+60x30' },
      { series: 'dispatch_queue_oldest_job_age_seconds{queue="deliver-webhook",state="created",instance="a"}', values: '2x30' },
    ],
    alert_rule_test: [
      { eval_time: '8m', alertname: 'DispatchQueueJobsLate', exp_alerts: [] },
      {
        eval_time: '15m',
        alertname: 'DispatchQueueJobsLate',
        exp_alerts: [
          {
            exp_labels: { severity: 'critical', queue: 'send-message' },
            exp_annotations: {
              summary: 'Jobs of queue send-message are late',
              description:
                'The oldest due job of queue send-message has waited 15m 0s. Check that Dispatch processes are running (their logs, /readyz) and that the database is healthy.',
            },
          },
        ],
      },
    ],
  },
  {
    name: 'an endpoint disabled fires for 15 minutes; endpoints disabled long ago do not',
    interval: '1m',
    input_series: [
      { series: 'dispatch_webhook_endpoints{state="disabled",instance="a"}', values: '3x20 4x40' },
      { series: 'dispatch_webhook_endpoints{state="disabled",instance="b"}', values: '3x20 4x40' },
    ],
    alert_rule_test: [
      { eval_time: '10m', alertname: 'DispatchWebhookEndpointDisabled', exp_alerts: [] },
      {
        eval_time: '25m',
        alertname: 'DispatchWebhookEndpointDisabled',
        exp_alerts: [
          {
            exp_labels: { severity: 'info' },
            exp_annotations: {
              summary: 'A webhook endpoint was disabled',
              description:
                "Now 4 webhook endpoints are disabled, more than 15 minutes ago. The logs' 'webhook attempt failed' records (endpoint_id, reason, status_code) say why; the account's owner re-enables the endpoint once it answers.",
            },
          },
        ],
      },
      { eval_time: '45m', alertname: 'DispatchWebhookEndpointDisabled', exp_alerts: [] },
    ],
  },
  {
    name: 'one answer in eleven 5xx fires',
    interval: '1m',
    input_series: [
      { series: 'dispatch_http_request_duration_seconds_count{operation="sendMessage",method="POST",status="201",instance="a"}', values: '0+100x30' },
      { series: 'dispatch_http_request_duration_seconds_count{operation="sendMessage",method="POST",status="503",instance="a"}', values: '0+10x30' },
    ],
    alert_rule_test: [
      {
        eval_time: '20m',
        alertname: 'DispatchHighServerErrorRatio',
        exp_alerts: [
          {
            exp_labels: { severity: 'critical' },
            exp_annotations: {
              summary: 'Dispatch answers more than 5 % of requests with 5xx',
              description:
                "9.091% of API requests answered 5xx over the last 5 minutes. 503 means the database is unreachable or its pool is exhausted; 500 is logged as 'unexpected error' with the request id.",
            },
          },
        ],
      },
    ],
  },
  {
    name: 'client errors alone never fire the server error alert',
    interval: '1m',
    input_series: [
      { series: 'dispatch_http_request_duration_seconds_count{operation="sendMessage",method="POST",status="201",instance="a"}', values: '0+100x30' },
      { series: 'dispatch_http_request_duration_seconds_count{operation="sendMessage",method="POST",status="400",instance="a"}', values: '0+50x30' },
    ],
    alert_rule_test: [{ eval_time: '20m', alertname: 'DispatchHighServerErrorRatio', exp_alerts: [] }],
  },
];

describe('docs/prometheus-alerts.yaml', () => {
  it('has the four alerts, each with a severity, a summary and a description', async () => {
    const found = await rules();
    expect(found.map((rule) => rule.alert)).to.deep.equal([
      'DispatchDeliveryRateDrop',
      'DispatchQueueJobsLate',
      'DispatchWebhookEndpointDisabled',
      'DispatchHighServerErrorRatio',
    ]);
    for (const rule of found) {
      expect(rule.labels?.severity, rule.alert).to.be.oneOf(['info', 'warning', 'critical']);
      expect(rule.annotations?.summary, rule.alert).to.be.a('string').and.have.length.above(0);
      expect(rule.annotations?.description, rule.alert).to.be.a('string').and.have.length.above(0);
    }
    const errorRatio = found.find((rule) => rule.alert === 'DispatchHighServerErrorRatio') as Rule;
    expect(errorRatio.expr).to.include('status=~"5.."').and.not.include('4..');
  });

  it('passes promtool check rules, and fires exactly when its unit tests say', async function () {
    const promtool = requirePromtool(this);
    const checked = await runPromtool(promtool, ['check', 'rules', RULES]);
    expect(checked.code, checked.output).to.equal(0);
    expect(checked.output).to.include('SUCCESS: 4 rules found');

    const dir = await mkdtemp(join(tmpdir(), 'dispatch-alerts-'));
    try {
      const tests = join(dir, 'alerts.test.yaml');
      await writeFile(tests, yaml.dump({ rule_files: [RULES], evaluation_interval: '1m', tests: UNIT_TESTS }));
      const tested = await runPromtool(promtool, ['test', 'rules', tests]);
      expect(tested.code, tested.output).to.equal(0);
      expect(tested.output).to.include('SUCCESS');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names only metrics that GET /metrics exposes', async () => {
    const used = new Set((await rules()).flatMap((rule) => [...rule.expr.matchAll(/\bdispatch_[a-z0-9_]+/g)].map((match) => match[0])));
    expect([...used].sort()).to.deep.equal([
      'dispatch_delivery_reports_total',
      'dispatch_http_request_duration_seconds_count',
      'dispatch_queue_oldest_job_age_seconds',
      'dispatch_webhook_endpoints',
    ]);
    const response = await fetch(`${harness.baseUrl.replace('/api/v1', '')}/metrics`);
    expect(response.status).to.equal(200);
    const types = exposedTypes(await response.text());
    const missing = [...used].filter((series) => !exposedMetric(series, types));
    expect(missing, 'metrics the rules name but /metrics does not expose').to.deep.equal([]);
  });
});
