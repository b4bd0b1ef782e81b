/**
 * One signed POST to a subscriber: Standard Webhooks headers (the `standardwebhooks` package signs), a
 * total deadline of 10 s for the whole exchange (a receiver that drips bytes is cut off all the same), no
 * redirects (node's http never follows them), sent to the address that was checked (names and IP literals
 * in every form; private destinations refused unless allowed), and at most 1,000 characters of the
 * answer kept.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import { OutboundRefusedError, resolveAllowedAddress } from '../../net/outbound';

export const TIMEOUT_MS = 10_000;
const EXCERPT = 1000;

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  excerpt: string | null;
}

/** `abort` ends the attempt at once (a worker shutting down); the result then says so. */
export async function postSigned(
  url: string,
  secret: string,
  eventId: string,
  sentAt: Date,
  payload: string,
  allowPrivate: boolean,
  abort?: AbortSignal,
): Promise<PostResult> {
  const signature = new Webhook(secret).sign(eventId, sentAt, payload);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const target = new URL(url);
  let address: string;
  try {
    // Within the deadline too: a DNS answer that never comes is cut off like a receiver that never answers.
    address = await Promise.race([
      resolveAllowedAddress(target.hostname, { allowPrivate }),
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`no address for ${target.hostname} within ${TIMEOUT_MS / 1000} s`)),
          TIMEOUT_MS,
        ).unref(),
      ),
    ]);
  } catch (err) {
    const message =
      err instanceof OutboundRefusedError ? `private_destination: ${err.message}` : (err as Error).message;
    return { statusCode: null, durationMs: elapsed(), error: message.slice(0, 500), excerpt: null };
  }
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: Omit<PostResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      abort?.removeEventListener('abort', onAbort);
      resolve({ ...r, durationMs: elapsed() });
      req.destroy();
    };
    const req = request(
      {
        protocol: target.protocol,
        host: address,
        port: target.port || undefined,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        // TLS is verified against the name in the URL, not the address connected to.
        servername: target.hostname.replace(/^\[(.*)\]$/, '$1'),
        headers: {
          host: target.host,
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
        const finish = () =>
          done({ statusCode: res.statusCode ?? null, error: null, excerpt: body.slice(0, EXCERPT) || null });
        res.on('end', finish);
        res.on('close', finish);
      },
    );
    const deadline = setTimeout(
      () => done({ statusCode: null, error: `no complete answer within ${TIMEOUT_MS / 1000} s`, excerpt: null }),
      TIMEOUT_MS,
    );
    const onAbort = () =>
      done({ statusCode: null, error: 'interrupted: the worker shut down during the attempt', excerpt: null });
    req.on('error', (err) => done({ statusCode: null, error: err.message.slice(0, 500), excerpt: null }));
    if (abort?.aborted) return onAbort();
    abort?.addEventListener('abort', onAbort);
    req.end(payload);
  });
}
