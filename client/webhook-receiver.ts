/**
 * An example webhook receiver: `WEBHOOK_SECRET=whsec_... PORT=8080 npm run example:webhooks`, then subscribe
 * `http://<this host>:8080/` (a server started with ALLOW_PRIVATE_WEBHOOKS=1 allows a local URL). It checks
 * each delivery's signature, drops duplicates by id, and prints the event.
 */
import { createServer } from 'node:http';
import { verifyWebhook } from './webhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('Set WEBHOOK_SECRET to the subscription secret (whsec_...).');
const seen = new Set<string>();

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const event = verifyWebhook(Buffer.concat(chunks), req.headers, secret);
      if (!seen.has(event.id)) console.log(event.type, JSON.stringify(event.data));
      seen.add(event.id);
      res.writeHead(204).end();
    } catch (err) {
      console.error('refused:', (err as Error).message);
      res.writeHead(400).end();
    }
  });
}).listen(Number(process.env.PORT ?? 8080), () => console.log(`listening on ${process.env.PORT ?? 8080}`));
