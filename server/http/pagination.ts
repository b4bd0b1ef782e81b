/**
 * Offset pagination of the list operations. The request validator has already applied the spec's
 * defaults (`Limit.yaml`, `Skip.yaml`) to the query, so they are read here, never restated.
 */
export interface Page {
  limit: number;
  skip: number;
}

/** The page a validated list request asks for. */
export function pageOf(query: { limit?: number; skip?: number }): Page {
  const { limit, skip } = query;
  if (limit === undefined || skip === undefined) throw new Error('pageOf needs a query the OpenAPI validator has filled with its defaults');
  return { limit, skip };
}

/** The spec's `{ items, pagination }` of one page of `total` items. */
export function paginated<T>(items: T[], page: Page, total: number) {
  return { items, pagination: { limit: page.limit, skip: page.skip, total, hasMore: page.skip + items.length < total } };
}
