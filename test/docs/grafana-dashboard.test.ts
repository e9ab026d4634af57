import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { harness } from '../support/harness.ts';

const DASHBOARD = new URL('../../docs/grafana-dashboard.json', import.meta.url);
const DATASOURCE = '${DS_PROMETHEUS}';
const HISTOGRAM_SUFFIXES = ['_bucket', '_count', '_sum'];

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

interface Dashboard {
  __inputs: { name: string; type: string; pluginId: string }[];
  uid: string;
  title: string;
  schemaVersion: number;
  refresh: string;
  time: { from: string; to: string };
  tags: string[];
  panels: Panel[];
}

const load = async (): Promise<Dashboard> => JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;

/** Every panel, rows' nested (collapsed) panels included. */
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);

/** `# TYPE name type` lines of an exposition, as name → type. */
const exposedTypes = (text: string): Map<string, string> =>
  new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1], match[2]]));

/** The exposed metric a series name of a query belongs to (a histogram's `_bucket`, `_count`, `_sum` belong to it), if any. */
function exposedMetric(series: string, types: Map<string, string>): string | undefined {
  if (types.has(series)) return series;
  const suffix = HISTOGRAM_SUFFIXES.find((s) => series.endsWith(s));
  const base = suffix && series.slice(0, -suffix.length);
  return base && types.get(base) === 'histogram' ? base : undefined;
}

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
    expect(rows.map((row) => row.title)).to.deep.equal(['Traffic', 'Upstreams', 'Messages', 'Queues', 'Webhooks', 'Money', 'Process']);

    const charts = panels.filter((panel) => panel.type !== 'row');
    expect(charts).to.not.be.empty;
    for (const panel of panels) {
      const { h, w, x, y } = panel.gridPos ?? {};
      expect([h, w, x, y].every(Number.isInteger), `gridPos of "${panel.title}"`).to.equal(true);
      expect(x + w, `"${panel.title}" fits the 24-column grid`).to.be.at.most(24);
    }
    for (const panel of charts) {
      expect(['timeseries', 'stat'], `type of "${panel.title}"`).to.include(panel.type);
      expect(panel.description, `description of "${panel.title}"`).to.be.a('string').and.not.be.empty;
      expect(panel.targets, `targets of "${panel.title}"`).to.be.an('array').that.is.not.empty;
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid, `datasource of "${panel.title}" ${target.refId}`).to.equal(DATASOURCE);
        expect(target.expr, `expr of "${panel.title}" ${target.refId}`).to.be.a('string').and.not.be.empty;
      }
    }
    // No two panels overlap.
    for (const [i, a] of panels.entries()) {
      for (const b of panels.slice(i + 1)) {
        const apart = a.gridPos.x + a.gridPos.w <= b.gridPos.x || b.gridPos.x + b.gridPos.w <= a.gridPos.x || a.gridPos.y + a.gridPos.h <= b.gridPos.y || b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        expect(apart, `"${a.title}" and "${b.title}" overlap`).to.equal(true);
      }
    }
  });

  it('queries only metrics that GET /metrics exposes', async () => {
    const dashboard = await load();
    const used = new Set(
      allPanels(dashboard.panels)
        .flatMap((panel) => panel.targets ?? [])
        .flatMap((target) => [...(target.expr ?? '').matchAll(/\bdispatch_[a-z0-9_]+/g)].map((match) => match[0])),
    );
    expect(used.size).to.be.above(0);

    const response = await fetch(`${harness.baseUrl.replace('/api/v1', '')}/metrics`);
    expect(response.status).to.equal(200);
    const types = exposedTypes(await response.text());
    expect(types.size).to.be.above(0);

    const missing = [...used].filter((series) => !exposedMetric(series, types)).sort();
    expect(missing, 'metrics the dashboard queries but /metrics does not expose').to.deep.equal([]);
  });
});
