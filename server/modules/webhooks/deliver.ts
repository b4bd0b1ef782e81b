/**
 * One signed POST to a subscriber: Standard Webhooks headers (the `standardwebhooks` package signs), a
 * 10 s budget, no redirects (node's http never follows them), private destinations refused by the
 * lookup unless allowed, and at most 1,000 characters of the answer kept.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import { guardedLookup } from '../../net/outbound';

export const TIMEOUT_MS = 10_000;
const EXCERPT = 1000;

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  excerpt: string | null;
}

export async function postSigned(url: string, secret: string, eventId: string, sentAt: Date, payload: string, allowPrivate: boolean): Promise<PostResult> {
  const signature = new Webhook(secret).sign(eventId, sentAt, payload);
  const started = performance.now();
  const target = new URL(url);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const done = (r: Omit<PostResult, 'durationMs'>) => resolve({ ...r, durationMs: Math.round(performance.now() - started) });
    const req = request(
      target,
      {
        method: 'POST',
        lookup: guardedLookup({ allowPrivate }),
        timeout: TIMEOUT_MS,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'leadreach-webhooks/1',
          'webhook-id': eventId,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': signature,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < EXCERPT) body += chunk;
          else res.destroy(); // the rest is not read, let alone logged
        });
        const finish = () => done({ statusCode: res.statusCode ?? null, error: null, excerpt: body.slice(0, EXCERPT) || null });
        res.on('end', finish);
        res.on('close', finish);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => done({ statusCode: null, error: err.message.slice(0, 500), excerpt: null }));
    req.end(payload);
  });
}
