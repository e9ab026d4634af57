import { randomBase62 } from '../domain/ids.ts';
import { loadConfig, ConfigError, type Config } from './config.ts';
import { readCredentials, writeCredentials } from './credentials.ts';
import { isEmpty, seedDemoTenant } from './demo-seed.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded-postgres.ts';
import { waitForDatabase } from './database-wait.ts';
import { createLogger } from './logger.ts';
import { startDispatch } from './server.ts';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`dispatch: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** `npm start`: an embedded PostgreSQL and a demo tenant when DATABASE_URL is unset, else the given server. */
export async function main(): Promise<void> {
  let config = readConfig();
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    logger.info({ data_dir: config.dataDir }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres(config.dataDir, (line) => logger.debug({ postgres: line.trim() }, 'postgres'));
    databaseUrl = embedded.socketUrl;
    const saved = await readCredentials(config.dataDir);
    config = { ...config, adminToken: config.adminToken ?? saved?.admin_token ?? `adm_${randomBase62(40)}` };
  } else if (!(await waitForDatabase(databaseUrl, config.databaseConnectTimeoutSeconds, logger))) {
    process.exit(1);
  }
  const dispatch = await startDispatch(config, databaseUrl, logger).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE' && error.code !== 'EACCES') throw error;
    process.stderr.write(
      `dispatch: cannot listen on ${config.host}:${config.port}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : 'permission denied'}; set PORT to another port\n`,
    );
    await embedded?.stop();
    process.exit(1);
  });

  if (embedded && (await isEmpty(dispatch.db))) {
    const { apiKey } = await seedDemoTenant(dispatch.db);
    const file = await writeCredentials(config.dataDir, { base_url: dispatch.baseUrl, api_key: apiKey, admin_token: config.adminToken as string });
    // What a person reads once goes to stderr: stdout carries only log records, for collectors.
    process.stderr.write(
      [
        '',
        'Dispatch is ready with a demo account (10.00 USD, sender "Dispatch", a simulator route).',
        `  Base URL:    ${dispatch.baseUrl}`,
        `  API key:     ${apiKey}`,
        `  Admin token: ${config.adminToken}`,
        `  Saved to:    ${file} (shown only this once)`,
        '',
        `  curl ${dispatch.baseUrl}/account -H "Authorization: Bearer ${apiKey}"`,
        '',
      ].join('\n') + '\n',
    );
  } else if (embedded) {
    await writeCredentials(config.dataDir, {
      ...(await readCredentials(config.dataDir)),
      base_url: dispatch.baseUrl,
      admin_token: config.adminToken as string,
    });
    process.stderr.write(`Dispatch listening on ${dispatch.baseUrl} (credentials in ${config.dataDir}/credentials.json)\n`);
  } else if (config.role === 'worker') {
    process.stderr.write(`Dispatch worker running; probes and metrics on ${new URL(dispatch.baseUrl).origin}\n`);
  } else {
    process.stderr.write(
      `Dispatch listening on ${dispatch.baseUrl}${config.role === 'api' ? ' (API only: run a DISPATCH_ROLE=worker process beside it)' : ''}\n`,
    );
  }
  logger.info({ base_url: dispatch.baseUrl, role: config.role, embedded: embedded !== undefined }, 'listening');

  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await dispatch.stop();
    await embedded?.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
