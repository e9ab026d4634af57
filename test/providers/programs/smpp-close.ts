// Binds an SMPP provider to the SMSC at argv[2], optionally submits, closes it, and returns. The
// process then exits by itself only if the provider left no timer or socket behind: a test in
// a process of its own, since the test run's process has sockets and timers of its own.
import { createSmppProvider } from '../../../providers/smpp.ts';

const [port, password, mode] = process.argv.slice(2);
const provider = createSmppProvider(
  { host: '127.0.0.1', port: Number(port), system_id: 'dispatch', password },
  { routeId: 1, dlrUrl: 'http://127.0.0.1/unused', onReport: async () => {}, onInbound: async () => {} },
  { enquireLinkMs: 50, responseTimeoutMs: 1_000, rebindMinMs: 20, rebindMaxMs: 200 },
);
if (mode === 'submit') {
  const outcome = await provider.submit({
    messageId: 'msg_test',
    to: '+447700900123',
    from: 'Dispatch',
    body: 'hello',
    encoding: 'GSM-7',
    segments: 1,
    parts: ['hello'],
  });
  process.stdout.write(`${outcome.status}\n`);
} else {
  // Closed when the test says so (a line on stdin), after the SMSC has refused it a few times.
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.destroy();
}
await provider.close();
