import { readdirSync } from 'node:fs';
import { expect } from 'chai';
import pg from 'pg';
import { randomBase62 } from '../../domain/ids.ts';
import { ADMIN_TOKEN, harness, TEST_WEBHOOK_ENV } from '../support/harness.ts';
import { cli, cliEnv, finished, startCli } from './run-cli.ts';

describe('dispatch serve and migrate', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('serve starts Dispatch as npm start does (here on DATABASE_URL), and stops on SIGTERM with exit 0', async () => {
    const child = startCli(
      ['serve', '--port', '0', '--host', '127.0.0.1'],
      cliEnv({ DATABASE_URL: harness.database.url, ADMIN_TOKEN, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...TEST_WEBHOOK_ENV }),
    );
    const result = finished(child);
    let stdout = '';
    // "listening on" goes to stderr: stdout carries only log records.
    child.stderr.on('data', (chunk: string) => (stdout += chunk));
    const deadline = Date.now() + 30_000;
    let baseUrl: string | undefined;
    while (!(baseUrl = /Dispatch listening on (\S+)\s/.exec(stdout)?.[1])) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve did not start: ${stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await fetch(new URL('/readyz', baseUrl))).status).to.equal(200);
    const routes = await cli(['routes', 'list', '--url', baseUrl, '--json']);
    expect(routes.code, routes.stderr).to.equal(0);

    child.kill('SIGTERM');
    expect((await result).code).to.equal(0);
  });

  it('migrate applies every migration to an empty database, and lists them', async () => {
    const server = new URL(harness.database.url);
    const name = `dispatch_cli_${randomBase62(8).toLowerCase()}`;
    const admin = new pg.Client({ connectionString: harness.database.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      server.pathname = `/${name}`;
      const result = await cli(['migrate', '--json', '--database-url', server.toString()], { env: cliEnv({ DATABASE_URL: undefined }) });
      expect(result.code, result.stderr).to.equal(0);
      const onDisk = readdirSync(new URL('../../db/migrations', import.meta.url))
        .filter((file) => file.endsWith('.ts'))
        .sort();
      expect(JSON.parse(result.stdout).applied).to.deep.equal(onDisk);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('migrate applies nothing to a current database and says so', async () => {
    const env = cliEnv({ DATABASE_URL: harness.database.url });
    const human = await cli(['migrate'], { env });
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.include('Already up to date');
    const json = await cli(['migrate', '--json'], { env });
    expect(JSON.parse(json.stdout)).to.deep.equal({ applied: [] });
  });

  it('migrate needs DATABASE_URL (exit 2) and reports an unreachable server (exit 3)', async () => {
    const none = await cli(['migrate'], { env: cliEnv({ DATABASE_URL: undefined }) });
    expect(none.code).to.equal(2);
    expect(none.stderr).to.include('DATABASE_URL is required');
    const unreachable = await cli(['migrate', '--database-url', 'postgres://postgres@127.0.0.1:9/none'], { env: cliEnv({ DATABASE_URL: undefined }) });
    expect(unreachable.code).to.equal(3);
    expect(unreachable.stderr).to.match(/^error: cannot connect to the database: /);
  });
});
