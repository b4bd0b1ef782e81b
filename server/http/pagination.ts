/**
 * Pagination of the list operations. The request validator has already applied the spec's defaults
 * (`Limit.yaml`, `Skip.yaml`, a search's `page` and `perPage`) to the request, so they are read, never
 * restated.
 */
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
