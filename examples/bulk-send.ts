/**
 * Sends one body to many recipients with the SDK, 1,000 per request, and prints what failed.
 *
 *   DISPATCH_API_KEY=ds_live_... npx node examples/bulk-send.ts +14155550123 +14155550124
 */
import { Dispatch } from '../sdk/index.ts';

const dispatch = new Dispatch({ apiKey: process.env.DISPATCH_API_KEY ?? '', baseUrl: process.env.DISPATCH_URL });
const recipients = process.argv.slice(2);

for (let start = 0; start < recipients.length; start += 1000) {
  const result = await dispatch.messages.bulk({ recipients: recipients.slice(start, start + 1000), from: 'Dispatch', body: 'Your order has shipped.' });
  console.log(`accepted ${result.sent} of ${result.total}`);
  for (const message of result.messages.filter((m) => m.status === 'failed')) console.log(`  ${message.to}: ${message.error?.code}`);
}
