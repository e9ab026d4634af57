import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

/**
 * The house style's floors: app -> handlers | jobs -> domain -> db | providers. Each folder may
 * import from itself and from the floors below it, never from a floor above or beside it.
 */
const MAY_IMPORT: Record<string, string[]> = {
  app: ['app', 'handlers', 'jobs', 'domain', 'db', 'providers'],
  handlers: ['handlers', 'domain', 'db', 'providers'],
  jobs: ['jobs', 'domain', 'db', 'providers'],
  domain: ['domain', 'db', 'providers'],
  db: ['db'],
  providers: ['providers'],
};

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => join(entry.parentPath, entry.name));
}

describe('the import floors', () => {
  it('has every import of app, handlers, jobs, domain, db and providers point down', async () => {
    const violations: string[] = [];
    for (const floor of Object.keys(MAY_IMPORT)) {
      for (const file of await sourceFiles(floor)) {
        const text = await readFile(file, 'utf8');
        for (const [, target] of text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)) {
          const top = relative('.', join(dirname(file), target)).split(sep)[0];
          if (top in MAY_IMPORT && !MAY_IMPORT[floor].includes(top)) violations.push(`${file} imports ${target}`);
        }
      }
    }
    expect(violations).to.deep.equal([]);
  });
});
