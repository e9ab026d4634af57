// dispatch serve: starts Dispatch exactly as `npm start` does, by running the same module
// (app/main.ts starts the service when it is imported). The flags only set the environment
// variables that module reads.
import { Command } from 'commander';
import { Output } from '../output.ts';

export function serveCommand(): Command {
  return new Command('serve')
    .description('Start Dispatch (as `npm start`): embedded PostgreSQL under DATA_DIR unless DATABASE_URL is set')
    .option('--port <port>', 'HTTP port [env: PORT, default 3000]')
    .option('--host <address>', 'bind address [env: HOST, default 127.0.0.1]')
    .option('--data-dir <dir>', 'embedded database and credentials directory [env: DATA_DIR, default .data]')
    .addHelpText(
      'after',
      '\nEvery other setting comes from the environment (DATABASE_URL, ADMIN_TOKEN, PUBLIC_URL, LOG_LEVEL...): see the Configuration section of README.md, in the Dispatch directory.\nStops on SIGTERM or Ctrl-C after finishing in-flight work.',
    )
    .action(async (options: { port?: string; host?: string; dataDir?: string }) => {
      if (options.port !== undefined) process.env.PORT = options.port;
      if (options.host !== undefined) process.env.HOST = options.host;
      if (options.dataDir !== undefined) process.env.DATA_DIR = options.dataDir;
      try {
        await import('../../app/main.ts');
      } catch (error) {
        // As under `npm start`, a failed start ends the process (the embedded database with it).
        process.exit(new Output(false).fail(error));
      }
    });
}
