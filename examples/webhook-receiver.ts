/**
 * A webhook receiver in plain Node: verifies each delivery's signature over the raw body (with the
 * 5-minute tolerance and a constant-time comparison), answers 2xx at once, and handles each event
 * id once, because Dispatch delivers at least once.
 *
 *   DISPATCH_WEBHOOK_SECRET=whsec_... npx node examples/webhook-receiver.ts
 */
import { createServer } from 'node:http';
import { isKnownEvent, verifyWebhook, WebhookVerificationError } from '../sdk/webhooks.ts';

const secret = process.env.DISPATCH_WEBHOOK_SECRET;
if (!secret) throw new Error('Set DISPATCH_WEBHOOK_SECRET to the signing_secret shown when the endpoint was created.');
const port = Number(process.env.PORT ?? 4000);

// A real receiver keeps this in its database (a unique key on the event id) so it survives restarts.
const seen = new Set<string>();

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      // The raw bytes, exactly as sent: parsing and re-serialising the JSON would break the signature.
      const event = verifyWebhook(Buffer.concat(chunks), req.headers['dispatch-signature'] as string | undefined, secret, { toleranceSeconds: 300 });
      res.writeHead(200).end();
      if (seen.has(event.id)) return;
      seen.add(event.id);
      // Event types grow: one added after this SDK was built is acknowledged above and ignored.
      if (!isKnownEvent(event)) return;
      if (event.type === 'message.received') console.log(`${event.type} from ${event.data.from}: ${event.data.body}`);
      else if (event.type === 'recipient.opted_out' || event.type === 'recipient.opted_in') console.log(`${event.type} for ${event.data.number}`);
      else if (event.type === 'balance.low') console.log(`${event.type}: ${event.data.balance} ${event.data.currency} is below ${event.data.threshold}`);
      else console.log(`${event.type} for ${event.data.id}: ${event.data.status}`);
    } catch (error) {
      res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
      console.error(`refused a delivery: ${(error as Error).message}`);
    }
  });
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/`));
