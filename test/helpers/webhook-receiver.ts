/** A webhook receiver on loopback: records every request (headers and raw body) and answers what a test says. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedHook[];
  /** The status to answer (default 200); a function may vary it per request. */
  status: number | ((hook: ReceivedHook) => number);
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver = { received: [] as ReceivedHook[], status: 200 as WebhookReceiver['status'] };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hook = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      receiver.received.push(hook);
      const status = typeof receiver.status === 'function' ? receiver.status(hook) : receiver.status;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? `failure ${'x'.repeat(5000)}` : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
