import { log, type Bench, type Measurement } from '../context.ts';
import { ms, perSecond, ratio, refusals } from '../format.ts';
import { runLoad } from '../load.ts';

const CONNECTIONS = 32;

/** Target 3: GET /account (authentication, rate limit, one read) against GET /healthz of the same process, both closed loop. */
export async function measureAccountRead(bench: Bench): Promise<Measurement> {
  const seconds = bench.options.durations.readSeconds;
  const tenant = await bench.tenant('account-read');
  log(`3: GET /healthz then GET /account, closed loop, ${CONNECTIONS} connections, ${seconds} s each`);
  const health = await runLoad({ urls: bench.rootUrls('/healthz'), method: 'GET', keys: [], connections: CONNECTIONS, durationSeconds: seconds });
  const account = await runLoad({ urls: bench.apiUrls('/account'), method: 'GET', keys: tenant.keys, connections: CONNECTIONS, durationSeconds: seconds });
  const share = account.okPerSecond / health.okPerSecond;
  return {
    rows: [
      {
        target: '3',
        what: `GET /account, closed loop, ${CONNECTIONS} connections, 50 keys`,
        measured: `${perSecond(account.okPerSecond, 'req')} (p99 ${ms(account.latency.p99)}${refusals(account)})`,
        baseline: `GET /healthz ${perSecond(health.okPerSecond, 'req')}`,
        ratio: ratio(share),
        goal: '>= 0.30',
        pass: share >= 0.3,
      },
    ],
    figures: { health, account },
  };
}
