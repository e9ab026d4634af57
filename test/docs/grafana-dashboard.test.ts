import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { harness } from '../support/harness.ts';
import { exposedMetric, exposedTypes } from '../support/promtool.ts';

const DASHBOARD = new URL('../../docs/grafana-dashboard.json', import.meta.url);
const DATASOURCE = '${DS_PROMETHEUS}';

interface GridPos {
  h: number;
  w: number;
  x: number;
  y: number;
}

interface Target {
  datasource?: { type?: string; uid?: string };
  expr?: string;
  refId?: string;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos: GridPos;
  targets?: Target[];
  panels?: Panel[];
}

interface Variable {
  name: string;
  type: string;
  datasource?: { uid?: string };
  query?: { query?: string } | string;
  multi?: boolean;
  includeAll?: boolean;
}

interface Dashboard {
  __inputs: { name: string; type: string; pluginId: string }[];
  uid: string;
  title: string;
  schemaVersion: number;
  refresh: string;
  time: { from: string; to: string };
  tags: string[];
  panels: Panel[];
  templating: { list: Variable[] };
}

const load = async (): Promise<Dashboard> => JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;

/** Every panel, rows' nested (collapsed) panels included. */
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);

/** Every expression of every panel, with its panel's title. */
const expressions = (dashboard: Dashboard) =>
  allPanels(dashboard.panels).flatMap((panel) => (panel.targets ?? []).map((target) => ({ title: panel.title, expr: target.expr ?? '' })));

/** Dispatch's series and prom-client's default ones (standard names: process_*, nodejs_*). */
const SERIES = /\b(?:dispatch|process|nodejs)_[a-z0-9_]+/g;

describe('docs/grafana-dashboard.json', () => {
  it('is an importable dashboard whose panels all query the ${DS_PROMETHEUS} input', async () => {
    const dashboard = await load();
    expect(dashboard).to.include({ uid: 'dispatch-overview', title: 'Dispatch', schemaVersion: 39, refresh: '30s' });
    expect(dashboard.time).to.deep.equal({ from: 'now-6h', to: 'now' });
    expect(dashboard.tags).to.deep.equal(['dispatch', 'sms']);
    const input = dashboard.__inputs.find((candidate) => candidate.name === 'DS_PROMETHEUS');
    expect(input, 'the DS_PROMETHEUS input').to.include({ type: 'datasource', pluginId: 'prometheus' });

    const panels = allPanels(dashboard.panels);
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size, 'panel ids are unique').to.equal(ids.length);
    const rows = panels.filter((panel) => panel.type === 'row');
    expect(rows.map((row) => row.title)).to.deep.equal(['Traffic', 'Upstreams', 'Deliveries', 'Messages', 'Queues', 'Webhooks', 'Money', 'Process']);

    const charts = panels.filter((panel) => panel.type !== 'row');
    expect(charts).to.have.length.above(0);
    for (const panel of panels) {
      const { h, w, x, y } = panel.gridPos ?? {};
      expect([h, w, x, y].every(Number.isInteger), `gridPos of "${panel.title}"`).to.equal(true);
      expect(x + w, `"${panel.title}" fits the 24-column grid`).to.be.at.most(24);
    }
    for (const panel of charts) {
      expect(['timeseries', 'stat'], `type of "${panel.title}"`).to.include(panel.type);
      expect(panel.description, `description of "${panel.title}"`).to.be.a('string').and.have.length.above(0);
      expect(panel.targets, `targets of "${panel.title}"`).to.be.an('array').with.length.above(0);
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid, `datasource of "${panel.title}" ${target.refId}`).to.equal(DATASOURCE);
        expect(target.expr, `expr of "${panel.title}" ${target.refId}`).to.be.a('string').and.have.length.above(0);
      }
    }
    // No two panels overlap.
    for (const [i, a] of panels.entries()) {
      for (const b of panels.slice(i + 1)) {
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
          b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
          a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
          b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        expect(apart, `"${a.title}" and "${b.title}" overlap`).to.equal(true);
      }
    }
  });

  it('lets the viewer pick instances and routes, and filters the series that carry them', async () => {
    const dashboard = await load();
    const variables = dashboard.templating.list;
    expect(variables.map((variable) => variable.name)).to.deep.equal(['instance', 'route']);
    for (const variable of variables) {
      expect(variable, variable.name).to.include({ type: 'query', multi: true, includeAll: true });
      expect(variable.datasource?.uid).to.equal(DATASOURCE);
      const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
      expect(query).to.match(new RegExp(`^label_values\\(dispatch_[a-z0-9_]+, ${variable.name}\\)$`));
    }
    for (const { title, expr } of expressions(dashboard)) {
      // Per-process series carry `instance` (Prometheus adds it); the database figures are global.
      const perProcess = /\b(?:dispatch_http|dispatch_upstream|dispatch_delivery|dispatch_webhook_attempts|process|nodejs)_/.test(expr);
      if (perProcess) expect(expr, `"${title}" filters by $instance`).to.include('instance=~"$instance"');
      if (/dispatch_(?:upstream|delivery|messages)_/.test(expr)) expect(expr, `"${title}" filters by $route`).to.include('route=~"$route"');
    }
  });

  it('shows the delivery rate and the delivery latency by route', async () => {
    const dashboard = await load();
    const deliveries = allPanels(dashboard.panels).filter(
      (panel) => panel.type !== 'row' && (panel.targets ?? []).some((target) => /dispatch_delivery_/.test(target.expr ?? '')),
    );
    const rate = deliveries.find((panel) => panel.title === 'Delivery rate by route');
    expect(rate?.targets?.[0].expr).to.match(
      /^sum by \(route\) \(rate\(dispatch_delivery_reports_total\{[^}]*status="delivered"\}\[\w+\]\)\) \/ sum by \(route\) \(rate\(dispatch_delivery_reports_total/,
    );
    expect(deliveries.map((panel) => panel.title)).to.include.members(['Delivery latency p50 by route', 'Delivery latency p95 by route']);
  });

  it('queries only metrics that GET /metrics exposes', async () => {
    const dashboard = await load();
    const used = new Set(expressions(dashboard).flatMap(({ expr }) => [...expr.matchAll(SERIES)].map((match) => match[0])));
    expect(used.size).to.be.above(0);

    const response = await fetch(`${harness.baseUrl.replace('/api/v1', '')}/metrics`);
    expect(response.status).to.equal(200);
    const types = exposedTypes(await response.text());
    expect(types.size).to.be.above(0);

    const missing = [...used].filter((series) => !exposedMetric(series, types)).sort();
    expect(missing, 'metrics the dashboard queries but /metrics does not expose').to.deep.equal([]);
  });
});
