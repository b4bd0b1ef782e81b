/**
 * Pagination of the list operations. The request validator has already applied the spec's defaults
 * (`Limit.yaml`, `Skip.yaml`, a search's `page` and `perPage`) to the request, so they are read, never
 * restated; `finiteQueryNumbers` refuses what its coercion lets through.
 */
import type { NextFunction, Request, Response } from 'express';
import { badRequest, detail } from './errors';

/**
 * Mounted right after the request validator. Its coercion turns `Infinity`, `-Infinity` and `1e400` into
 * numbers that pass `type: integer` and skip `minimum`/`maximum` (Ajv checks bounds on finite numbers only),
 * so a list would run with no page cap or a limit its database refuses. Only the validator puts numbers in
 * the query, so every number there is a parameter the spec declares numeric: a non-finite one is a 400.
 */
export function finiteQueryNumbers(req: Request, _res: Response, next: NextFunction): void {
  for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) {
    if (typeof value === 'number' && !Number.isFinite(value))
      throw badRequest(`request/query/${name} must be a finite integer`, [
        detail(name, 'must be a finite integer', 'type', 'query'),
      ]);
  }
  next();
}
export interface Page {
  limit: number;
  skip: number;
}

/** A parameter the spec gives a default, read from a request the validator has filled with it. */
export function defaulted<T>(value: T | undefined, name: string): T {
  if (value === undefined)
    throw new Error(`${name} has a spec default, so the OpenAPI validator sets it; was the request validated?`);
  return value;
}

/** The page a validated list request asks for. */
export function pageOf(query: { limit?: number; skip?: number }): Page {
  return { limit: defaulted(query.limit, 'limit'), skip: defaulted(query.skip, 'skip') };
}

/** The spec's `{ items, pagination }` of one page of `total` items. */
export function paginated<T>(items: T[], page: Page, total: number) {
  return {
    items,
    pagination: { limit: page.limit, skip: page.skip, total, hasMore: page.skip + items.length < total },
  };
}
