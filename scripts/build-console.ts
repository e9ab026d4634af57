/**
 * Builds the web console (console/) into console/dist when its build is missing or older than
 * its sources, installing the console's own dependencies first when they are missing or older
 * than its lockfile. Run by `npm install`/`npm ci` (the root's `prepare` script) and by `npm start`,
 * so that nobody builds it by hand and a checkout never serves a stale console.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONSOLE = fileURLToPath(new URL('../console/', import.meta.url));
/** What the build reads; the types generated from openapi.yaml are left out, openapi.yaml counts. */
const SOURCES = ['src', 'index.html', 'vite.config.ts', 'tsconfig.json', 'package.json', 'package-lock.json', '../openapi.yaml'];
const GENERATED = join(CONSOLE, 'src', 'api', 'schema.d.ts');
const BUILT = join(CONSOLE, 'dist', 'index.html');
/** npm writes this file when it installs; older than the lockfile means the lockfile changed since. */
const INSTALLED = join(CONSOLE, 'node_modules', '.package-lock.json');

function modified(path: string): number {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

/**
 * The newest modification time of a file, or of any file under a folder. Folders' own times are
 * left out: writing the generated types (the typecheck in `npm test`) touches theirs.
 */
function newest(path: string): number {
  if (!existsSync(path) || path === GENERATED) return 0;
  if (!statSync(path).isDirectory()) return statSync(path).mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

function npm(args: string[]): void {
  const result = spawnSync('npm', args, { cwd: CONSOLE, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`console: npm ${args.join(' ')} failed (${result.error?.message ?? `exit ${String(result.status)}`})`);
    process.exit(result.status ?? 1);
  }
}

// `--include=dev`: under `npm ci --omit=dev` (the Docker image) or NODE_ENV=production the console still needs Vite to build.
if (modified(INSTALLED) < modified(join(CONSOLE, 'package-lock.json'))) npm(['ci', '--include=dev', '--no-audit', '--no-fund']);
const sources = Math.max(...SOURCES.map((source) => newest(join(CONSOLE, source))));
if (modified(BUILT) < sources) npm(['run', 'build']);
else console.log('console: console/dist is up to date');
