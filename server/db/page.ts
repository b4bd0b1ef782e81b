/**
 * A page of a resource list and its total in one statement. A round trip is most of what a short list read
 * costs, so the total rides on the page's rows: a window counts every matching row before the page is cut.
 */
import type { Knex } from 'knex';
import type { Executor } from './index';

type Order = { column: string; order: 'asc' | 'desc' }[];

/**
 * `filtered()`: the matching rows as `alias` (FROM and WHERE only). `derive`, when given, selects the
 * returned columns over the page's rows (named `alias` again), so what it joins or counts is done for the
 * page only. A page past the end has no row to carry the total: then it is counted apart.
 */
export async function pageWithTotal<T>(
  db: Executor,
  filtered: () => Knex.QueryBuilder,
  alias: string,
  order: Order,
  page: { limit: number; skip: number },
  derive?: (rows: Knex.QueryBuilder) => Knex.QueryBuilder,
): Promise<{ rows: T[]; total: number }> {
  const inner = filtered().select(`${alias}.*`, db.raw('count(*) OVER ()::int AS page_total')).orderBy(order).limit(page.limit).offset(page.skip);
  const found: (T & { page_total: number })[] = derive ? await derive(db.from(inner.as(alias))).orderBy(order) : await inner;
  if (found.length) return { rows: found.map(({ page_total: _, ...row }) => row as T), total: found[0].page_total };
  if (!page.skip) return { rows: [], total: 0 };
  const [{ count }] = await filtered().count<{ count: string | number }[]>({ count: '*' });
  return { rows: [], total: Number(count) };
}
