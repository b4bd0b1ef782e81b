/**
 * The spec's list body of a service's page, and the guard on its numeric query parameters.
 */
import type { NextFunction, Request, Response } from 'express';
import { detail, invalid } from '../platform/errors';
import type { Paged } from '../platform/paging';

/**
 * Mounted right after the request validator. Its coercion turns `Infinity`, `-Infinity` and `1e400` into
 * numbers that pass `type: integer` and skip `minimum`/`maximum` (Ajv checks bounds on finite numbers only),
 * so a list would run with no page cap or a limit its database refuses. Only the validator puts numbers in
 * the query, so every number there is a parameter the spec declares numeric: a non-finite one is a 400.
 */
export function finiteQueryNumbers(req: Request, _res: Response, next: NextFunction): void {
  for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) {
    if (typeof value === 'number' && !Number.isFinite(value))
      throw invalid(`request/query/${name} must be a finite integer`, [
        detail(name, 'must be a finite integer', 'type', 'query'),
      ]);
  }
  next();
}

/** The spec's `{ items, pagination }` of one page of `total` items. */

export function paginated<T>({ items, page, total }: Paged<T>) {
  return {
    items,
    pagination: { limit: page.limit, skip: page.skip, total, hasMore: page.skip + items.length < total },
  };
}
