import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

describe('sdk/generated/openapi.ts', () => {
  it('is what `npm run generate` makes from openapi.yaml now', async function () {
    this.timeout(60_000);
    const dir = await mkdtemp(join(tmpdir(), 'dispatch-types-'));
    try {
      const fresh = join(dir, 'openapi.ts');
      await promisify(execFile)(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', 'openapi.yaml', '-o', fresh]);
      const committed = await readFile('sdk/generated/openapi.ts', 'utf8');
      expect(committed === (await readFile(fresh, 'utf8')), 'the generated types are stale: run `npm run generate`').to.equal(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
