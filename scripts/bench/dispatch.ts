import { fileURLToPath } from 'node:url';
import { freePort } from '../../app/free-port.ts';
import { residentKb, startNode, type NodeProcess } from './processes.ts';

const MAIN = fileURLToPath(new URL('../../app/main.ts', import.meta.url));

export interface DispatchProcess {
  origin: string;
  /** The API's base, `<origin>/api/v1`. */
  baseUrl: string;
  process: NodeProcess;
  residentKb: () => Promise<number>;
}

/**
 * `node app/main.ts` as its own process on the run's database, started one after the other so
 * that the first one alone migrates. Logs at warn: a figure must not pay for log lines.
 */
export async function startDispatchProcesses(count: number, databaseUrl: string, adminToken: string, logDir: string): Promise<DispatchProcess[]> {
  const started: DispatchProcess[] = [];
  for (let i = 1; i <= count; i++) {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: origin, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn' };
    const child = startNode(`dispatch-${i}`, MAIN, [], env, logDir);
    started.push({ origin, baseUrl: `${origin}/api/v1`, process: child, residentKb: () => residentKb(child.pid) });
    await child.waitUntilAnswering(`${origin}/readyz`);
  }
  return started;
}
