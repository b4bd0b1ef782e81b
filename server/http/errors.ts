/**
 * Errors only HTTP knows: a missing or refused key, a quota window, a body the parser refuses, a route that is
 * not there. Services throw the domain's errors (server/platform/errors.ts); the error middleware (error-middleware.ts)
 * gives those their statuses and writes every error as the v1 body `{ error }` or the v2 body with `details`.
 */
import type { components } from '../../generated/api';
import { fieldName, type ErrorCode, type FieldProblem } from '../platform/errors';

/** A field at fault as the v2 body shows it (`field` names its location first: `body.contacts.3.email`). */
export type ErrorDetail = components['schemas']['ErrorDetail'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    /** Extra response headers (Retry-After on a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A domain problem as the v2 body shows it. */
export const wireDetail = (p: FieldProblem): ErrorDetail => ({
  field: fieldName(p),
  location: p.location,
  message: p.message,
  code: p.code,
});

export const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);
/** Seconds a client is asked to wait (Retry-After) before retrying while storage cannot be reached. */
export const STORAGE_RETRY_SECONDS = 5;
export const serviceUnavailable = () =>
  new ApiError(503, 'service_unavailable', 'Service unavailable: storage cannot be reached. Please retry later.', [], {
    'Retry-After': String(STORAGE_RETRY_SECONDS),
  });
