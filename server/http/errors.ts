/**
 * The errors services throw. The error middleware (error-middleware.ts) turns them, and the
 * validator's errors, into the v1 body `{ error }` or the v2 body with `details`.
 */
import type { components } from '../../generated/api';

export type ErrorDetail = components['schemas']['ErrorDetail'];
export type ErrorCode = components['schemas']['ErrorV2']['code'];

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

/** A detail for one body field: `detail('contacts.3.email', 'is not a valid email', 'format')`. */
export function detail(
  field: string,
  message: string,
  code: string,
  location: ErrorDetail['location'] = 'body',
): ErrorDetail {
  return { field: `${location}.${field}`, location, message, code };
}

export const badRequest = (message: string, details: ErrorDetail[] = []) =>
  new ApiError(400, 'validation_error', message, details);
export const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);
export const paymentRequired = (message: string) => new ApiError(402, 'insufficient_credits', message);
export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);
export const notFound = (message: string, details: ErrorDetail[] = []) =>
  new ApiError(404, 'not_found', message, details);
export const conflict = (message: string, details: ErrorDetail[] = []) =>
  new ApiError(409, 'conflict', message, details);
/** Seconds a client is asked to wait (Retry-After) before retrying while storage cannot be reached. */
export const STORAGE_RETRY_SECONDS = 5;
export const serviceUnavailable = () =>
  new ApiError(503, 'service_unavailable', 'Service unavailable: storage cannot be reached. Please retry later.', [], {
    'Retry-After': String(STORAGE_RETRY_SECONDS),
  });
