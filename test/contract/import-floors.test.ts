import { expect } from 'chai';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';

/**
 * The house style's floors: app -> handlers | jobs -> domain -> db | providers, with lib/
 * (in-process machinery with no rules and no SQL) beside the ground floor and sdk/ (the
 * contract's generated types and the webhook signature scheme, a package of its own) beneath
 * them all. Each folder may import from itself and from the floors below it, never from a floor above
 * or beside it: so handlers/ and jobs/ never import each other. console/ (the web console) talks to
 * Dispatch through the HTTP API alone and imports nothing outside itself.
 */
const MAY_IMPORT: Record<string, string[]> = {
  app: ['app', 'handlers', 'jobs', 'domain', 'db', 'providers', 'lib', 'sdk'],
  handlers: ['handlers', 'domain', 'db', 'providers', 'lib', 'sdk'],
  jobs: ['jobs', 'domain', 'db', 'providers', 'lib', 'sdk'],
  domain: ['domain', 'db', 'providers', 'lib', 'sdk'],
  db: ['db', 'lib', 'sdk'],
  providers: ['providers', 'lib', 'sdk'],
  lib: ['lib'],
  sdk: ['sdk'],
  console: ['console'],
};

/** Installed packages and built files are not the project's code. */
const notOurs = (path: string) => path.split(sep).some((part) => part === 'node_modules' || part === 'dist');

/** SQL text or a query built on a table, which belong in db/: `db('messages')`, `.raw(`, a statement's keywords. */
const SQL_IN_CODE = [
  /\b\w+\s*(<[^>]*>)?\(\s*'[a-z_]+'\s*\)\s*\.(where|insert|update|select|first|delete|join)\b/,
  /\.raw\(/,
  /[`'"]\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\s/,
];

/** Comments may name SQL; code may not. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !notOurs(relative(folder, entry.parentPath)))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every import that breaks a floor, and every file of domain/ that holds SQL, under `root`. */
async function violationsIn(root: string): Promise<string[]> {
  const violations: string[] = [];
  for (const floor of Object.keys(MAY_IMPORT)) {
    for (const file of await sourceFiles(join(root, floor))) {
      const text = await readFile(file, 'utf8');
      const shown = relative(root, file);
      for (const [, target] of text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)) {
        const top = relative(root, join(dirname(file), target)).split(sep)[0];
        const outside = floor === 'sdk' || floor === 'console' ? top !== floor : top in MAY_IMPORT && !MAY_IMPORT[floor].includes(top);
        if (outside) violations.push(`${shown} imports ${target}`);
      }
      if (floor === 'domain' && SQL_IN_CODE.some((pattern) => pattern.test(withoutComments(text)))) violations.push(`${shown} holds SQL`);
    }
  }
  return violations;
}

describe('the import floors', () => {
  it('has every import of app, handlers, jobs, domain, db, providers and sdk point down, sdk and console import nothing outside them, and domain hold no SQL', async () => {
    expect(await violationsIn('.')).to.deep.equal([]);
  });

  describe('fails when a violation is added', () => {
    let root: string;

    beforeEach(async () => {
      root = await mkdtemp(join(tmpdir(), 'dispatch-floors-'));
      for (const floor of Object.keys(MAY_IMPORT))
        await cp(floor, join(root, floor), { recursive: true, filter: (source) => !notOurs(relative(floor, source)) });
    });

    afterEach(async () => {
      await rm(root, { recursive: true, force: true });
    });

    const added = async (file: string, text: string) => {
      await writeFile(join(root, file), text);
      return violationsIn(root);
    };

    it('an import that points up a floor', async () => {
      expect(await added('db/up.ts', "import { startWorkers } from '../app/workers.ts';\n")).to.deep.equal(['db/up.ts imports ../app/workers.ts']);
    });

    it('SQL or a query on a table in domain/', async () => {
      expect(await added('domain/query.ts', "export const q = (db: any) => db('messages').where({ id: 1 });\n")).to.deep.equal(['domain/query.ts holds SQL']);
      await rm(join(root, 'domain/query.ts'));
      expect(await added('domain/raw.ts', 'export const q = (db: any) => db.raw(`SELECT 1`);\n')).to.deep.equal(['domain/raw.ts holds SQL']);
    });

    it('an import of sdk/ from outside it', async () => {
      expect(await added('sdk/server.ts', "export { acceptBatch } from '../domain/sending.ts';\n")).to.deep.equal([
        'sdk/server.ts imports ../domain/sending.ts',
      ]);
    });

    it("an import of the server's code from console/", async () => {
      expect(await added('console/src/server.ts', "import { ApiError } from '../../domain/errors.ts';\n")).to.deep.equal([
        'console/src/server.ts imports ../../domain/errors.ts',
      ]);
    });

    it('handlers/ importing jobs/, or the reverse', async () => {
      expect(await added('handlers/job.ts', "import { startSendWorker } from '../jobs/send-message.ts';\n")).to.deep.equal([
        'handlers/job.ts imports ../jobs/send-message.ts',
      ]);
      await rm(join(root, 'handlers/job.ts'));
      expect(await added('jobs/handler.ts', "import { handlers } from '../handlers/index.ts';\n")).to.deep.equal([
        'jobs/handler.ts imports ../handlers/index.ts',
      ]);
    });
  });
});
