/**
 * `npm run bench:chart`: the latency percentiles of bench/results.json (the last `npm run bench`)
 * as a chart, bench/latency-percentiles.png, rendered by Debian's Chromium (the same browser the
 * docs test drives; nothing is downloaded). Every load of the run that recorded latencies is a
 * row: its p50, p90 and p99 on a logarithmic axis, so that a 2 ms read and a 300 ms send share it.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const RESULTS = fileURLToPath(new URL('../bench/results.json', import.meta.url));
const CHART = fileURLToPath(new URL('../bench/latency-percentiles.png', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

interface Latency {
  p50: number;
  p90: number;
  p99: number;
}

interface Results {
  generated_at: string;
  mode: string;
  processes: number;
  machine: { cpus: number; cpu_model: string };
  figures: Record<string, unknown>;
}

/** Every `latency` object in the figures, named by the path that leads to it. */
function latencies(figures: unknown, path: string[] = []): { name: string; latency: Latency }[] {
  if (!figures || typeof figures !== 'object') return [];
  const { latency } = figures as { latency?: Latency };
  if (latency && typeof latency.p99 === 'number') return [{ name: path.filter((part) => part !== 'result').join(' / '), latency }];
  return Object.entries(figures).flatMap(([key, value]) => latencies(value, [...path, key]));
}

const LABELS: Record<string, string> = {
  send: 'send: POST /messages/send, closed loop',
  'open-loop': 'open-loop: POST /messages/send, open loop',
  'account-read / health': 'account-read: GET /healthz',
  'account-read / account': 'account-read: GET /account',
  'limits / fresh': 'limits: send, key with 0 sent this month',
  'limits / busy': 'limits: send, key with N sent this month',
  'opt-outs / without': 'opt-outs: send, no opt-outs',
  'opt-outs / with': 'opt-outs: send, many opt-outs',
  'webhooks / alone': 'webhooks: event to delivery, alone',
  'webhooks / beside': 'webhooks: event to delivery, 50 hanging',
  soak: 'soak: send, 10-minute open loop',
};

function svg(rows: { name: string; latency: Latency }[], title: [string, string]): string {
  const left = 330;
  const width = 1100;
  const rowHeight = 34;
  const top = 90;
  // Room on the right for the longest bar's label (p50 / p90 / p99).
  const plot = width - left - 190;
  const height = top + rows.length * rowHeight + 60;
  const max = Math.max(...rows.map(({ latency }) => latency.p99));
  const decades = Math.max(1, Math.ceil(Math.log10(max)) + 1);
  const x = (ms: number) => left + (Math.log10(Math.max(ms, 0.1)) + 1) * (plot / decades);
  const colours: [keyof Latency, string][] = [
    ['p99', '#d9534f'],
    ['p90', '#f0ad4e'],
    ['p50', '#337ab7'],
  ];
  const grid = Array.from({ length: decades + 1 }, (_, i) => 10 ** (i - 1)).map(
    (ms) =>
      `<line x1="${x(ms)}" y1="${top - 10}" x2="${x(ms)}" y2="${height - 45}" stroke="#ddd"/><text x="${x(ms)}" y="${height - 28}" text-anchor="middle">${ms < 1 ? ms : ms.toLocaleString('en-US')} ms</text>`,
  );
  const bars = rows.map(({ name, latency }, i) => {
    const y = top + i * rowHeight;
    const drawn = colours.map(
      ([key, colour]) =>
        `<rect x="${left}" y="${y}" width="${x(latency[key]) - left}" height="22" fill="${colour}"><title>${key} ${latency[key]} ms</title></rect>`,
    );
    return `<text x="${left - 10}" y="${y + 16}" text-anchor="end">${name}</text>${drawn.join('')}<text x="${x(latency.p99) + 6}" y="${y + 16}" fill="#555">${latency.p50} / ${latency.p90} / ${latency.p99}</text>`;
  });
  const legend = colours.map(
    ([key, colour], i) => `<rect x="${left + i * 90}" y="50" width="14" height="14" fill="${colour}"/><text x="${left + i * 90 + 20}" y="62">${key}</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="13">
<rect width="100%" height="100%" fill="white"/><text x="20" y="22" font-size="15" font-weight="bold">${title[0]}</text><text x="20" y="40" font-size="13">${title[1]}</text>
${legend.join('')}${grid.join('')}${bars.join('')}</svg>`;
}

const results = JSON.parse(await readFile(RESULTS, 'utf8')) as Results;
const rows = latencies(results.figures).map(({ name, latency }) => ({ name: LABELS[name] ?? name, latency }));
if (rows.length === 0) throw new Error(`no latencies in ${RESULTS}: run npm run bench first`);
const title: [string, string] = [
  `Dispatch bench, ${results.mode} run, ${results.processes} process(es), ${results.machine.cpus} × ${results.machine.cpu_model}, ${results.generated_at}`,
  'latency p50 / p90 / p99 (ms, log scale)',
];
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 100 } });
  await page.setContent(`<!doctype html><body style="margin:0">${svg(rows, title)}</body>`);
  await page.locator('svg').screenshot({ path: CHART });
} finally {
  await browser.close();
}
process.stdout.write(`wrote ${CHART} (${rows.length} loads)\n`);
