/**
 * The one place errors become responses: the domain's errors from services (server/platform/errors.ts, each kind
 * its status here), ApiError from the HTTP layer, the OpenAPI validator's errors,
 * body-parser's errors, a database that cannot be reached, and anything unexpected. The body is
 * `{ error }` on /v1 and the standardized body with `details` on /v2.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../platform/logger';
import { detail, DomainError, type ErrorCode, type ErrorKind } from '../platform/errors';
import { ApiError, serviceUnavailable, wireDetail, type ErrorDetail } from './errors';
import { isStorageDown } from '../db';

interface ValidatorError {
  status: number;
  message: string;
  errors?: { path: string; message: string; errorCode?: string }[];
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_error',
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/** The status of each kind of domain error. */
const STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  paymentRequired: 402,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  tooLarge: 413,
  unavailable: 503,
};

const LOCATIONS: Record<string, ErrorDetail['location']> = {
  body: 'body',
  query: 'query',
  path: 'path',
  params: 'path',
  headers: 'header',
};

function isValidatorError(err: unknown): err is ValidatorError {
  return typeof err === 'object' && err !== null && 'status' in err && Array.isArray((err as ValidatorError).errors);
}

/** `/body/contacts/3/email` -> `body.contacts.3.email`. */
function validatorDetail(e: { path: string; message: string; errorCode?: string }): ErrorDetail {
  const parts = e.path
    .replace(/^\.?\/?/, '')
    .split(/[/.]/)
    .filter(Boolean);
  const location = LOCATIONS[parts[0]] ?? 'body';
  const field = [location, ...parts.slice(1)].join('.');
  return { field, location, message: e.message, code: (e.errorCode ?? 'invalid').split('.')[0] };
}

export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof DomainError)
    return new ApiError(STATUS_BY_KIND[err.kind], err.code, err.message, err.details.map(wireDetail));
  const bodyParser = err as { type?: string; status?: number; code?: string };
  if (bodyParser?.type === 'entity.parse.failed')
    return new ApiError(400, 'malformed_json', 'Malformed JSON in request body.');
  // zlib and brotli failures: a body that is not what its Content-Encoding says.
  if (bodyParser?.status === 400 && /^(Z_|ERR__)/.test(bodyParser.code ?? '')) {
    return new ApiError(
      400,
      'malformed_json',
      'Request body cannot be decoded with its Content-Encoding (gzip, deflate or br).',
    );
  }
  if (bodyParser?.type === 'entity.number.unsafe') return new ApiError(400, 'validation_error', (err as Error).message);
  if (bodyParser?.type === 'entity.too.large')
    return new ApiError(413, 'payload_too_large', 'Request body is too large.');
  if (bodyParser?.type === 'encoding.unsupported' || bodyParser?.type === 'charset.unsupported') {
    return new ApiError(415, 'unsupported_media_type', 'Unsupported media type: send application/json.');
  }
  // The request validator's; a 5xx of its own (a spec it cannot read) is an unexpected error like any other.
  if (isValidatorError(err) && err.status < 500) {
    const code = CODE_BY_STATUS[err.status] ?? 'validation_error';
    if (err.status === 404) return new ApiError(404, 'not_found', 'Route not found.');
    if (err.status === 405) return new ApiError(405, code, 'Method not allowed on this route.');
    if (err.status === 415) return new ApiError(415, code, 'Unsupported media type: send application/json.');
    // The validator's own text for an undecodable path carries a stray quote.
    if (err.message === "malformed uri'")
      return new ApiError(400, code, 'Malformed URI: the path is not valid percent-encoded UTF-8.', [
        wireDetail(detail('url', 'is not valid percent-encoded UTF-8', 'format', 'path')),
      ]);
    return new ApiError(err.status, code, err.message, (err.errors ?? []).map(validatorDetail));
  }
  if (isStorageDown(err)) return serviceUnavailable();
  return undefined;
}

export function errorMiddleware(logger: Logger) {
  // Express recognises an error handler by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const requestId = res.locals.requestId as string;
    const apiError = toApiError(err) ?? new ApiError(500, 'internal_error', 'Internal server error.');
    if (apiError.status >= 500) logger.error({ err, requestId, method: req.method, path: req.path }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(apiError.headers);
    const body =
      res.locals.apiVersion === 'v2'
        ? {
            error: apiError.message,
            code: apiError.code,
            statusCode: apiError.status,
            requestId,
            details: apiError.details,
          }
        : { error: apiError.message };
    res.status(apiError.status).json(body);
  };
}
