#!/usr/bin/env node
// The `dispatch` command line (package.json "bin"). Run by Node 24, which strips the types:
// `npx dispatch ...` or `npm exec dispatch -- ...` put node_modules/.bin, where the `node` package
// installs Node 24, first on PATH. V8's compiled code is kept on disk between runs (in
// NODE_COMPILE_CACHE, or the system's temporary directory), which must be switched on before the
// CLI's modules load, hence the dynamic import: a command starts in about two thirds of the time.
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { runCli } = await import('../cli/program.ts');

// A reader that went away (`dispatch events tail --json | head -1`) is no error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const code = await runCli(process.argv);
if (code !== undefined) process.exitCode = code;
