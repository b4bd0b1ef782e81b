/** Bulk rows that bench:scale and bench:export write by SQL, as the product's write paths leave them. */
import type { Executor } from '../server/db';
import { rebuildMemberBlocks } from '../server/modules/list/store';

/**
 * Deterministic uuid v7-shaped ids for bulk rows, so that rows can name each other without a join: 12 hex of a
 * millisecond time (base + k), version 7, 3 hex of an index (a campaign's), variant 8, then the kind (1 contact,
 * 2 message, 3 person) and k.
 */
export const BENCH_UUID_SQL = `
CREATE FUNCTION bench_uuid(kind int, idx int, k bigint) RETURNS uuid IMMUTABLE LANGUAGE sql AS $$
  SELECT (lpad(to_hex(1767225600000 + k), 12, '0') || '7' || lpad(to_hex(idx), 3, '0') || '8' || to_hex(kind) || lpad(to_hex(k), 14, '0'))::uuid
$$;`;

/** Runs one statement, attributing its time to the table it writes. */
export type RunSql = (table: string, sql: string, params?: unknown[]) => Promise<unknown>;

/**
 * Lead-database people `from` to `to - 1` (ids bench_uuid(3, 0, k)) as the loaders store them, each a member
 * of the people list `listId` (as list/add/leads stores it, added in person order), and the list's member
 * counter and member blocks, which the list module keeps on its own adds and removes, built from the rows.
 */
export async function addListPeople(
  run: RunSql,
  db: Executor,
  listId: string,
  from: number,
  to: number,
  now: Date,
): Promise<void> {
  const persons = `generate_series(${from}::bigint, ${to - 1}::bigint) k`;
  await run(
    'people',
    `INSERT INTO people (id, first_name, last_name, title, seniority, department, city, state, country, work_email, email_status,
                                      company_name, company_domain, company_industry, company_employee_count, score, created_at, updated_at)
    SELECT bench_uuid(3, 0, k), 'First' || k, 'Last' || k, 'Head of Sales', 'head', 'sales', 'Berlin', 'Berlin', 'Germany',
           'person' || k || '@company' || (k % 997) || '.example', 'verified', 'Company ' || (k % 997), 'company' || (k % 997) || '.example',
           'software', 50, (k % 100)::smallint, $1, $1
      FROM ${persons}`,
    [now],
  );
  await run(
    'list_people',
    `INSERT INTO list_people (list_id, person_id, added_at) SELECT $1, bench_uuid(3, 0, k), to_timestamp((1767225600000 + k) / 1000.0) FROM ${persons}`,
    [listId],
  );
  await run(
    'lists',
    'UPDATE lists SET member_count = (SELECT count(*) FROM list_people WHERE list_id = $1) WHERE id = $1',
    [listId],
  );
  await rebuildMemberBlocks(db, 'people', listId);
}
