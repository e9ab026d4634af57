/**
 * Builds the public API reference into docs/public/ (`npm run docs`):
 *
 * - docs/public/openapi.yaml: openapi.yaml bundled by the Redocly CLI with the decorators below:
 *   `remove-x-internal` drops every operation marked `x-internal: true` (the admin API),
 *   `remove-unused-components` drops the schemas, parameters and security schemes only those
 *   operations used, and `filter-out` drops the Admin tag, which no operation uses any more.
 *   Every operation carries `x-codeSamples` (curl and TypeScript; scripts/code-samples.ts), made
 *   from openapi.yaml at build time, so that an operation added later has them too.
 * - docs/public/index.html: `redocly build-docs` of that document, self-contained
 *   (`--inlineBundle`: no CDN, works offline), its prerendered links pointed at Redoc's hash
 *   routes (see hashRoutes) and the one image Redoc would fetch from a CDN made local (see
 *   localAssets).
 *
 * Both are built on the base URL of openapi.yaml, DOCUMENTED_ORIGIN; app/docs.ts serves them
 * with the installation's PUBLIC_URL in its place.
 *
 * The output is deterministic (no timestamps), so it is committed: a fresh clone serves /docs
 * without a build step, and test/docs/public-document.test.ts fails when it is stale.
 *
 * The decorators live here, in a config written for the build, and not in an `apis:` block of
 * redocly.yaml: openapi-typescript reads redocly.yaml too, and given any `apis:` block it ignores
 * its command line and generates the types of those APIs instead (see redocly.yaml).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { DOCUMENTED_ORIGIN } from '../app/docs.ts';
import { addCodeSamples, type OpenApiDocument } from './code-samples.ts';

export const SOURCE_PATH = fileURLToPath(new URL('../openapi.yaml', import.meta.url));
export const PUBLIC_DIR = fileURLToPath(new URL('../docs/public/', import.meta.url));
export const TITLE = 'Dispatch API reference';
/** The tag of the admin API, whose operations are all `x-internal`. */
export const ADMIN_TAG = 'Admin';

const LINT_CONFIG_PATH = fileURLToPath(new URL('../redocly.yaml', import.meta.url));
/** The CLI's own entry point, run by this Node (the .bin shim's shebang would pick the system Node). */
const REDOCLY_CLI = fileURLToPath(new URL('../node_modules/@redocly/cli/bin/cli.js', import.meta.url));

/** The Redocly configuration of the public build. JSON is YAML, so it is written as JSON. */
const PUBLIC_CONFIG = {
  telemetry: 'off',
  // Redoc shows only the x-codeSamples whose language this list names, in its order: without it,
  // the TypeScript samples were left out of the page.
  openapi: {
    codeSamples: {
      languages: [
        { lang: 'Shell', label: 'curl' },
        { lang: 'TypeScript', label: 'TypeScript (fetch)' },
      ],
    },
  },
  decorators: {
    'remove-x-internal': 'on',
    'remove-unused-components': 'on',
    'filter-out': { property: 'name', value: ADMIN_TAG },
  },
};

const run = promisify(execFile);

async function redocly(args: string[]): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [REDOCLY_CLI, ...args], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`redocly ${args[0]} failed:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

/**
 * The page is prerendered, then hydrated by Redoc, whose router in a standalone page works on
 * the URL's hash (/docs#/messages). The prerendered links are root-relative (/messages), and
 * hydration keeps them: a click works (Redoc's router takes it), but opening a link in a new tab
 * would leave /docs for a path the service does not have. So the links of the prerendered
 * markup, and only those, become what Redoc renders itself in the browser: #/messages.
 */
export function hashRoutes(html: string): string {
  const start = html.indexOf('<div id="redoc">');
  const end = html.indexOf('<script type="module">', start);
  if (start === -1 || end === -1) throw new Error('redocly build-docs wrote an unexpected page: no prerendered <div id="redoc"> before its script');
  return html.slice(0, start) + html.slice(start, end).replace(/ href="\/([^"]*)"/g, ' href="#/$1"') + html.slice(end);
}

/** The footer's "API docs by Redocly" logo, which Redoc loads from its CDN once hydrated. */
const CDN_LOGOS = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
/** The attribution as a local image: the word, in the footer's grey, with no request made. */
const LOCAL_LOGO = `data:image/svg+xml,${encodeURIComponent(
  "<svg xmlns='http://www.w3.org/2000/svg' width='64' height='16'><text x='0' y='12' font-family='sans-serif' font-size='12' fill='#6b6b7b'>Redocly</text></svg>",
)}`;

/**
 * Replaces what the page would load from another host with what it can show offline. A page
 * without a CDN reference that this knows of means the Redocly page changed: the build fails
 * rather than let a new one through unseen (test/docs/browser.test.ts checks the requests too).
 */
export function localAssets(html: string): string {
  let local = html;
  for (const url of CDN_LOGOS) {
    if (!local.includes(url)) throw new Error(`redocly build-docs wrote a page without ${url}: check which external assets it loads now`);
    local = local.replaceAll(url, LOCAL_LOGO);
  }
  return local;
}

/** openapi.yaml with its code samples, as the source of the bundle. */
async function withCodeSamples(path: string): Promise<void> {
  // CORE_SCHEMA: no YAML timestamps, so that an example date-time stays the string it is.
  const source = yaml.load(await readFile(SOURCE_PATH, 'utf8'), { schema: yaml.CORE_SCHEMA }) as OpenApiDocument;
  const base = source.servers?.[0]?.url ?? '';
  if (!base.startsWith(`${DOCUMENTED_ORIGIN}/`))
    throw new Error(`openapi.yaml's servers[0].url must start with ${DOCUMENTED_ORIGIN}/ (app/docs.ts serves PUBLIC_URL in its place), got ${base}`);
  await writeFile(path, JSON.stringify(addCodeSamples(source), null, 2));
}

export interface PublicDocs {
  /** The public OpenAPI document. */
  yamlPath: string;
  /** The Redoc page of that document. */
  htmlPath: string;
}

/** Builds openapi.yaml and index.html into `outDir` (docs/public/ by default). */
export async function buildPublicDocs(outDir: string = PUBLIC_DIR): Promise<PublicDocs> {
  const work = await mkdtemp(join(tmpdir(), 'dispatch-docs-'));
  try {
    const configPath = join(work, 'redocly.yaml');
    await writeFile(configPath, `${JSON.stringify(PUBLIC_CONFIG, null, 2)}\n`);
    await mkdir(outDir, { recursive: true });
    const yamlPath = join(outDir, 'openapi.yaml');
    const htmlPath = join(outDir, 'index.html');

    const sourcePath = join(work, 'openapi.json');
    await withCodeSamples(sourcePath);
    await redocly(['bundle', sourcePath, '--config', configPath, '--output', yamlPath]);
    // The public document is held to the same bar as openapi.yaml: zero errors, zero warnings.
    const lint = JSON.parse(await redocly(['lint', yamlPath, '--config', LINT_CONFIG_PATH, '--format', 'json'])) as {
      totals: { errors: number; warnings: number };
      problems: unknown[];
    };
    if (lint.totals.errors > 0 || lint.totals.warnings > 0) {
      throw new Error(`the public document does not lint clean:\n${JSON.stringify(lint.problems, null, 2)}`);
    }
    await redocly(['build-docs', yamlPath, '--config', configPath, '--inlineBundle', '--title', TITLE, '--output', htmlPath]);
    await writeFile(htmlPath, localAssets(hashRoutes(await readFile(htmlPath, 'utf8'))));
    return { yamlPath, htmlPath };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const started = performance.now();
  const { yamlPath, htmlPath } = await buildPublicDocs();
  process.stdout.write(`Built ${yamlPath} and ${htmlPath} in ${Math.round(performance.now() - started)} ms\n`);
}
