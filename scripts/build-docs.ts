/**
 * Builds the public API reference into docs/public/ (`npm run docs`):
 *
 * - docs/public/openapi.yaml: openapi.yaml bundled by the Redocly CLI with the decorators below:
 *   `remove-x-internal` drops every operation marked `x-internal: true` (the admin API),
 *   `remove-unused-components` drops the schemas, parameters and security schemes only those
 *   operations used, and `filter-out` drops the Admin tag, which no operation uses any more.
 * - docs/public/index.html: `redocly build-docs` of that document, self-contained
 *   (`--inlineBundle`: no CDN, works offline), its prerendered links pointed at Redoc's hash
 *   routes (see hashRoutes).
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

    await redocly(['bundle', SOURCE_PATH, '--config', configPath, '--output', yamlPath]);
    // The public document is held to the same bar as openapi.yaml: zero errors, zero warnings.
    const lint = JSON.parse(await redocly(['lint', yamlPath, '--config', LINT_CONFIG_PATH, '--format', 'json'])) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    if (lint.totals.errors > 0 || lint.totals.warnings > 0) {
      throw new Error(`the public document does not lint clean:\n${JSON.stringify(lint.problems, null, 2)}`);
    }
    await redocly(['build-docs', yamlPath, '--config', configPath, '--inlineBundle', '--title', TITLE, '--output', htmlPath]);
    await writeFile(htmlPath, hashRoutes(await readFile(htmlPath, 'utf8')));
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
