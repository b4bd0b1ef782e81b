/** The spec's list body of a service's page: `{ items, pagination: { limit, skip, total, hasMore } }`. */
import type { Paged } from '../paging';

export function paginated<T>({ items, page, total }: Paged<T>) {
  return {
    items,
    pagination: { limit: page.limit, skip: page.skip, total, hasMore: page.skip + items.length < total },
  };
}
