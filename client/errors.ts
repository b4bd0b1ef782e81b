/**
 * Typed errors. openapi-fetch answers `{ data, error, response }`; `error` is already the body the
 * spec documents for that operation and status. `unwrap()` turns a failed answer into an
 * `ApiRequestError` carrying the status, the body (v1 `{error}` or the v2 body with `details`) and
 * the request id, for callers who prefer exceptions.
 */
import type { components } from '../generated/api';

export type ErrorV1 = components['schemas']['ErrorV1'];
export type ErrorV2 = components['schemas']['ErrorV2'];
export type ErrorDetail = components['schemas']['ErrorDetail'];
export type ErrorBody = ErrorV1 | ErrorV2;

export function isErrorV2(body: unknown): body is ErrorV2 {
  return (
    typeof body === 'object' &&
    body !== null &&
    'statusCode' in body &&
    'code' in body &&
    Array.isArray((body as ErrorV2).details)
  );
}

function isErrorBody(body: unknown): body is ErrorBody {
  return typeof body === 'object' && body !== null && typeof (body as ErrorV1).error === 'string';
}

/** The `X-Request-Id` of a response (also in a v2 error body); quote it when you report a problem. */
export function requestIdOf(response: Response): string | undefined {
  return response.headers.get('x-request-id') ?? undefined;
}

export class ApiRequestError extends Error {
  readonly status: number;
  readonly body: ErrorBody;
  readonly requestId: string | undefined;
  /** The v2 machine-readable error class, when the body is v2. */
  readonly code: ErrorV2['code'] | undefined;
  /** The v2 field-level details; empty for a v1 body. */
  readonly details: ErrorDetail[];

  constructor(response: Response, body: unknown) {
    // A proxy or a crash may answer something that is not one of our bodies: keep its status.
    const errorBody: ErrorBody = isErrorBody(body)
      ? body
      : { error: `HTTP ${response.status} ${response.statusText}`.trim() };
    super(errorBody.error);
    this.name = 'ApiRequestError';
    this.status = response.status;
    this.body = errorBody;
    this.requestId = (isErrorV2(errorBody) ? errorBody.requestId : undefined) ?? requestIdOf(response);
    this.code = isErrorV2(errorBody) ? errorBody.code : undefined;
    this.details = isErrorV2(errorBody) ? errorBody.details : [];
  }
}

/** `const body = unwrap(await client.GET('/v1/ratelimit/limits'))`: the success body, or throws ApiRequestError. */
export function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(
  result: R,
): Extract<R, { error?: never }>['data'] {
  if (!result.response.ok) throw new ApiRequestError(result.response, result.error);
  return result.data;
}
