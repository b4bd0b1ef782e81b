/**
 * Gives every call of an operation that takes `Idempotency-Key` a fresh key (a UUID v4), so the
 * retries of that call (retry.ts) carry the same key and the server does the work once. The list
 * of operations is derived from the spec by `npm run generate`. A key the caller set is kept (to
 * retry one logical request across restarts, store it and pass it in `headers`).
 */
import type { Middleware } from 'openapi-fetch';
import idempotentOperations from '../generated/idempotent-operations.json';

const TAKES_KEY = new Set<string>(idempotentOperations);

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

export const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (!TAKES_KEY.has(`${request.method} ${schemaPath}`) || request.headers.has(IDEMPOTENCY_HEADER)) return undefined;
    request.headers.set(IDEMPOTENCY_HEADER, crypto.randomUUID());
    return request;
  },
};
