/**
 * One HTTP(S) request on a user's behalf to a service the operator configured (an identity provider's token
 * or user-info endpoint): sent to the address the outbound rule checked (TLS verified against the URL's
 * name), no redirects followed, the answer read up to a size bound, and the whole exchange, DNS included,
 * cut off at a total deadline.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { resolveAllowedAddress } from './outbound';

export interface OutboundRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  allowPrivate: boolean;
  /** The whole exchange, from the DNS look-up to the answer's last byte. */
  deadlineMs: number;
}

export interface OutboundAnswer {
  status: number;
  body: string;
}

/** The exchange did not finish within its deadline. */
export class OutboundTimeoutError extends Error {
  readonly code = 'timeout';
}

const MAX_ANSWER_BYTES = 256 * 1024;

/** Throws OutboundRefusedError (a private destination), OutboundTimeoutError, or the network's error. */
export async function outboundRequest(url: string, options: OutboundRequest): Promise<OutboundAnswer> {
  const target = new URL(url);
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new OutboundTimeoutError(`${target.host} gave no complete answer within ${options.deadlineMs} ms`),
      ),
    options.deadlineMs,
  );
  const aborted = new Promise<never>((_, reject) =>
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error)),
  );
  aborted.catch(() => undefined);
  try {
    const address = await Promise.race([
      resolveAllowedAddress(target.hostname, { allowPrivate: options.allowPrivate }),
      aborted,
    ]);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return await new Promise<OutboundAnswer>((resolve, reject) => {
      const req = send(
        {
          protocol: target.protocol,
          host: address,
          port: target.port || undefined,
          path: `${target.pathname}${target.search}`,
          method: options.method,
          servername: target.hostname.replace(/^\[(.*)\]$/, '$1'),
          headers: { host: target.host, ...options.headers },
          signal: controller.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES)
              res.destroy(new Error(`${target.host} answered more than ${MAX_ANSWER_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('error', reject);
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', (err) => reject(controller.signal.aborted ? (controller.signal.reason as Error) : err));
      req.end(options.body);
    });
  } finally {
    clearTimeout(timer);
  }
}
