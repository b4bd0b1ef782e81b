/**
 * Retries the seed's way: only a 429 (quota) or a 503 (storage unavailable) is retried, after an
 * exponential backoff with full jitter that never goes below the server's Retry-After, within a
 * number of attempts and a total time budget. A network error is retried too when the request
 * carries an Idempotency-Key (the server then does the work once, or replays its answer). Every
 * other answer, a network error without a key, and a timeout go back to the caller at once:
 * resending those could repeat a charge or a change (and a timed-out keyed request may still be
 * running, which a resend would only meet as a 409).
 */

export interface RetryOptions {
  /** Attempts in all, the first included (1 = never retry). Default 4. */
  maxAttempts?: number;
  /** Stop retrying when the next wait would end later than this many ms after the first attempt. Default 30 000. */
  maxElapsedMs?: number;
  /** Backoff base: the n-th retry waits a random time up to `baseDelayMs * 2^(n-1)`. Default 500. */
  baseDelayMs?: number;
  /** Cap of one backoff wait (before Retry-After is applied). Default 10 000. */
  maxDelayMs?: number;
  /** The shortest wait, so a retry is never an immediate resend. Default 100. */
  minDelayMs?: number;
  /** Statuses that are retried. Default [429, 503]. */
  retryOn?: number[];
  /** Injected for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
  /** Called before each wait (logging, metrics); `status` is 0 after a network error. */
  onRetry?: (info: { attempt: number; status: number; delayMs: number; requestId: string | null }) => void;
}

export type ResolvedRetryOptions = Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>;

export const RETRYABLE_STATUSES = [429, 503];

export function resolveRetryOptions(options: RetryOptions | false | undefined): ResolvedRetryOptions {
  const o = options === false ? { maxAttempts: 1 } : (options ?? {});
  const resolved = {
    maxAttempts: o.maxAttempts ?? 4,
    maxElapsedMs: o.maxElapsedMs ?? 30_000,
    baseDelayMs: o.baseDelayMs ?? 500,
    maxDelayMs: o.maxDelayMs ?? 10_000,
    minDelayMs: o.minDelayMs ?? 100,
    retryOn: o.retryOn ?? RETRYABLE_STATUSES,
    sleep: o.sleep ?? abortableSleep,
    random: o.random ?? Math.random,
    now: o.now ?? Date.now,
    onRetry: o.onRetry,
  };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1)
    throw new RangeError('retry.maxAttempts must be an integer >= 1');
  if (resolved.minDelayMs <= 0)
    throw new RangeError('retry.minDelayMs must be > 0: a retry is never an immediate resend');
  if (resolved.retryOn.some((s) => !RETRYABLE_STATUSES.includes(s)))
    throw new RangeError('retry.retryOn may only hold 429 and 503');
  return resolved;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `retry` (1-based): full jitter, at least Retry-After and minDelayMs. */
export function backoffDelay(retry: number, retryAfterMs: number | undefined, o: ResolvedRetryOptions): number {
  const cap = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (retry - 1));
  const jittered = Math.floor(o.random() * cap);
  return Math.max(o.minDelayMs, jittered, retryAfterMs ?? 0);
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A failed connection (not a timeout, not the caller's abort) of a request that is safe to resend. */
function isRetryableNetworkError(err: unknown, request: Request, signal: AbortSignal): boolean {
  return request.headers.has('Idempotency-Key') && !signal.aborted && err instanceof TypeError;
}

/**
 * A fetch that retries as described above. `timeoutMs` bounds each attempt (the attempt then
 * fails with a TimeoutError and is not retried: the server may have acted on it).
 */
export function retryingFetch(
  baseFetch: (input: Request) => Promise<Response>,
  options: ResolvedRetryOptions,
  timeoutMs?: number,
): (input: Request) => Promise<Response> {
  return async (request: Request) => {
    const started = options.now();
    for (let attempt = 1; ; attempt++) {
      // A body can be read once: keep the original to clone for the next attempt.
      const attemptRequest = attempt < options.maxAttempts ? request.clone() : request;
      const signal = timeoutMs ? AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) : request.signal;
      let response: Response;
      try {
        response = await baseFetch(new Request(attemptRequest, { signal }));
      } catch (err) {
        if (!isRetryableNetworkError(err, request, signal) || attempt >= options.maxAttempts) throw err;
        const delayMs = backoffDelay(attempt, undefined, options);
        if (options.now() + delayMs - started > options.maxElapsedMs) throw err;
        options.onRetry?.({ attempt, status: 0, delayMs, requestId: null });
        await options.sleep(delayMs, request.signal);
        continue;
      }
      if (!options.retryOn.includes(response.status) || attempt >= options.maxAttempts) return response;
      const delayMs = backoffDelay(
        attempt,
        parseRetryAfter(response.headers.get('retry-after'), options.now()),
        options,
      );
      if (options.now() + delayMs - started > options.maxElapsedMs) return response;
      options.onRetry?.({ attempt, status: response.status, delayMs, requestId: response.headers.get('x-request-id') });
      // Free the connection before waiting.
      await response.body?.cancel().catch(() => undefined);
      await options.sleep(delayMs, request.signal);
    }
  };
}
