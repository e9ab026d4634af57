import { fileURLToPath } from 'node:url';
import { freePort } from '../../app/free-port.ts';
import { startNode, type NodeProcess } from './processes.ts';

export interface UpstreamStats {
  submits: number;
  distinct: number;
  /** Message ids submitted more than once. */
  submittedTwice: number;
  reportsPosted: number;
  reportsFailed: number;
  /** Delivery reports not yet acknowledged by Dispatch. */
  reportsWaiting: number;
}

export interface Upstream {
  /** The route's `config.url`. */
  submitUrl: string;
  stats: () => Promise<UpstreamStats>;
  process: NodeProcess;
}

/** The fake provider (fake-upstream.ts) in its own process, its output in `logDir/<name>.log`. */
export async function startUpstream(logDir: string, name = 'fake-upstream'): Promise<Upstream> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = startNode(name, fileURLToPath(new URL('./fake-upstream.ts', import.meta.url)), [], { PORT: String(port) }, logDir);
  await child.waitUntilAnswering(`${origin}/stats`);
  return {
    submitUrl: `${origin}/sms`,
    stats: async () => (await (await fetch(`${origin}/stats`)).json()) as UpstreamStats,
    process: child,
  };
}
