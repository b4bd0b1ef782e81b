/**
 * Pages of a list. The request validator has already applied the spec's defaults (`Limit.yaml`, `Skip.yaml`,
 * a search's `page` and `perPage`) to the request, so they are read, never restated. A service answers a page
 * as `Paged` (its items, the part asked for and the whole list's count); server/http/pagination.ts writes it as
 * the spec's `{ items, pagination }`.
 */
export interface Page {
  limit: number;
  skip: number;
}

/** One page of a list: its items, the part asked for, and how many items the whole list holds. */
export interface Paged<T> {
  items: T[];
  page: Page;
  total: number;
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
