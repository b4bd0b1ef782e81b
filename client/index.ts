/**
 * The typed client of the Outreach and Lead Platform API, on openapi-fetch with the generated `paths`:
 *
 *   const api = createClient({ apiKey: process.env.API_KEY!, environment: 'production' });
 *   const { data, error, response } = await api.GET('/v1/ratelimit/limits');
 *
 * Every path, parameter, body and answer is typed from the spec. The key goes in `X-API-Key`.
 * 429 and 503 answers are retried with exponential backoff and full jitter, honouring Retry-After
 * (see retry.ts). Every POST that creates, charges or sends gets a fresh Idempotency-Key
 * (idempotency.ts), so it is also retried after a network error; other errors come back at once, typed (`error` is the v1 or v2 body), and
 * `unwrap()` turns them into an ApiRequestError carrying the request id.
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from '../generated/api';
// Only `servers` is read; the package build ships a copy of the bundle reduced to it.
import { servers } from '../generated/openapi.json';
import { resolveRetryOptions, retryingFetch, type RetryOptions } from './retry';
import { idempotencyKeys } from './idempotency';

export type { paths, components, operations } from '../generated/api';
export {
  ApiRequestError,
  unwrap,
  isErrorV2,
  requestIdOf,
  type ErrorV1,
  type ErrorV2,
  type ErrorDetail,
  type ErrorBody,
} from './errors';
export { parseRetryAfter, backoffDelay, type RetryOptions } from './retry';
export { verifyWebhook, type WebhookEvent } from './webhooks';

export type Environment = 'local' | 'staging' | 'production';

/** Base URLs by environment, from the spec's `servers` (their description names the environment). */
export const ENVIRONMENTS: Readonly<Record<Environment, string>> = Object.freeze(
  Object.fromEntries(servers.map((s) => [s.description, s.url])) as Record<Environment, string>,
);

interface CommonOptions {
  apiKey: string;
  /** Retry policy for 429 and 503; `false` sends each request once. */
  retry?: RetryOptions | false;
  /** Bounds each attempt, in ms; a timed-out attempt rejects with a TimeoutError and is not retried. */
  timeoutMs?: number;
  /** The fetch to use (defaults to globalThis.fetch). */
  fetch?: (input: Request) => Promise<Response>;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

export type ClientOptions = CommonOptions &
  ({ environment: Environment; baseUrl?: never } | { baseUrl: string; environment?: never });

export type ApiClient = Client<paths>;

export function createClient(options: ClientOptions): ApiClient {
  if (!options.apiKey) throw new TypeError('createClient: apiKey is required');
  const baseUrl =
    'baseUrl' in options && options.baseUrl ? options.baseUrl : ENVIRONMENTS[options.environment as Environment];
  if (!baseUrl)
    throw new TypeError(
      `createClient: unknown environment "${String(options.environment)}"; use ${Object.keys(ENVIRONMENTS).join(', ')} or baseUrl`,
    );
  const baseFetch = options.fetch ?? ((input: Request) => globalThis.fetch(input));
  const client = createFetchClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...options.headers, 'X-API-Key': options.apiKey },
    fetch: retryingFetch(baseFetch, resolveRetryOptions(options.retry), options.timeoutMs),
  });
  client.use(idempotencyKeys);
  return client;
}
