/** Lists and their memberships: plain rows. Members are ordered by (added_at, member id) everywhere. */
import type { Knex } from 'knex';
import { columnsOf, isEmbedded, pageTotal, prepared, TOTAL_COLUMN, type Executor } from '../../db';
import type { Position } from '../../http/cursor';

export type ListKind = 'people' | 'company';

export interface ListRow {
  id: string;
  workspace_id: string;
  kind: ListKind;
  name: string;
  /** Kept with every membership change (adjustMembers), never counted on a read. */
  member_count: number;
  created_at: Date;
  updated_at: Date;
}

/** What a page of members reads of its list (every member row carries it). */
export type PageList = Pick<ListRow, 'kind' | 'member_count'>;

/** A member: its lead-database id and when it joined the list. */
export interface MemberRef {
  id: string;
  added_at: Date;
}


const LIST_COLUMNS = columnsOf<ListRow>({ id: true, workspace_id: true, kind: true, name: true, member_count: true, created_at: true, updated_at: true });

const MEMBERS = {
  people: { table: 'list_people', column: 'person_id' },
  company: { table: 'list_companies', column: 'company_id' },
} as const;

/**
 * Runs a member query so that it walks the (list_id, added_at, member id) index and stops after `limit` rows.
 * PostgreSQL's planner does so from its statistics (autovacuum keeps them). The embedded database never
 * analyzes, and without statistics its planner would sort the whole list for every page, so there sorting is
 * disabled; SET LOCAL needs a transaction: the caller's (switched back on afterwards), or a short one of our
 * own, which on the embedded database costs no round trip.
 */
async function inIndexOrder<T>(db: Executor, run: (db: Executor) => Promise<T>, restore = true): Promise<T> {
  if (!isEmbedded(db)) return run(db);
  // Our own transaction ends with the query: nothing to switch back (a round trip less per batch of a walk).
  if (!db.isTransaction) return db.transaction((trx) => inIndexOrder(trx, run, false));
  await db.raw('SET LOCAL enable_sort = off');
  const result = await run(db);
  if (restore) await db.raw('SET LOCAL enable_sort = on');
  return result;
}

/** A page of members: `limit`, and an offset (`skip`) or the position it follows (`after`). */
export interface MemberRange {
  limit: number;
  skip?: number;
  after?: Position | null;
}

/** The member rows of a page in list order, of the list `listId` names (a value, or the outer query's column). */
function memberPage(db: Executor, kind: ListKind, listId: string | Knex.Raw, range: MemberRange) {
  const { table, column } = MEMBERS[kind];
  const q = db(table)
    .select<MemberRef[]>(`${column} as id`, 'added_at')
    .where('list_id', listId)
    .orderBy([{ column: 'added_at' }, { column }])
    .limit(range.limit);
  if (range.after) q.whereRaw(`(added_at, ${column}) > (?, ?)`, [range.after.at, range.after.id]);
  if (range.skip) q.offset(range.skip);
  return q;
}

/**
 * Another module's rows joined to a member page: it gets the page (alias `m`, its columns `member_id` and
 * `member_added_at`) and the column of the member id, and adds its joins and its columns, under names no list
 * column has. The lead module shows members so (LeadService.joinShownPeople), without naming our tables.
 */
export type MemberJoin = (page: Knex.QueryBuilder, memberId: string) => Knex.QueryBuilder;

/** A member and the row its MemberJoin read with it. */
export interface JoinedMember extends MemberRef {
  row: Record<string, unknown>;
}

type JoinedRow = Record<string, unknown> & { member_id: string; member_added_at: Date };

function joinedPage(db: Executor, kind: ListKind, listId: string | Knex.Raw, range: MemberRange, join: MemberJoin): Knex.QueryBuilder {
  const page = db.from(memberPage(db, kind, listId, range).as('m')).select('m.id as member_id', 'm.added_at as member_added_at');
  return join(page, 'm.id');
}

const joined = (row: JoinedRow): JoinedMember => ({ id: row.member_id, added_at: row.member_added_at, row });

export class ListStore {
  async find(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
    return db('lists').where({ workspace_id: workspaceId, id }).first<ListRow | undefined>();
  }

  /** Locks the list row, so deletes and membership changes of one list happen one after another. */
  async lock(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
    return db('lists').where({ workspace_id: workspaceId, id }).forUpdate().first<ListRow | undefined>();
  }

  async page(db: Executor, workspaceId: string, page: { limit: number; skip: number; kind?: ListKind }): Promise<{ rows: ListRow[]; total: number }> {
    const filtered = () => db('lists').where({ workspace_id: workspaceId, ...(page.kind ? { kind: page.kind } : {}) });
    const rows = await prepared<ListRow & { total: string }>(
      db,
      filtered()
        .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
        .offset(page.skip)
        .limit(page.limit)
        .select(...LIST_COLUMNS, db.raw(TOTAL_COLUMN)),
    );
    const total = await pageTotal(rows, page.skip, async () => {
      const [{ count }] = await filtered().count<{ count: string }[]>({ count: '*' });
      return Number(count);
    });
    return { rows, total };
  }

  async insert(db: Executor, row: ListRow): Promise<void> {
    await db('lists').insert(row);
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db('lists').where({ id }).delete();
  }

  /** Records a membership change of `delta` members (the caller holds the list's lock); returns the list as it is now. */
  async adjustMembers(db: Executor, id: string, delta: number, at: Date): Promise<ListRow> {
    const [row] = await db('lists')
      .where({ id })
      .update({ member_count: db.raw('member_count + ?', [delta]), updated_at: at })
      .returning<ListRow[]>('*');
    return row;
  }

  /** Adds memberships; returns the ids that were not members yet. */
  async addMembers(db: Executor, kind: ListKind, listId: string, ids: string[], at: Date): Promise<string[]> {
    if (!ids.length) return [];
    const { table, column } = MEMBERS[kind];
    // One order for every request, so concurrent inserts into one list take row locks in the same order.
    const rows = [...ids].sort().map((id) => ({ list_id: listId, [column]: id, added_at: at }));
    const inserted: Record<string, string>[] = await db(table).insert(rows).onConflict(['list_id', column]).ignore().returning(column);
    return inserted.map((r) => r[column]);
  }

  /** Removes memberships; returns the ids that were members. */
  async removeMembers(db: Executor, kind: ListKind, listId: string, ids: string[]): Promise<string[]> {
    const { table, column } = MEMBERS[kind];
    const removed: Record<string, string>[] = await db(table).where({ list_id: listId }).whereIn(column, ids).delete().returning(column);
    return removed.map((r) => r[column]);
  }

  /**
   * Members in list order, with the rows `join` adds: a page by offset (`skip`), or the page after `after`
   * (keyset: a client's cursor, and exports and sends that walk a whole list in constant memory).
   */
  async members(db: Executor, kind: ListKind, listId: string, range: MemberRange, join: MemberJoin = (page) => page): Promise<JoinedMember[]> {
    const rows = await inIndexOrder(db, (trx) => joinedPage(trx, kind, listId, range, join).orderBy([{ column: 'm.added_at' }, { column: 'm.id' }]) as Promise<JoinedRow[]>);
    return rows.map(joined);
  }

  /**
   * The workspace's list (undefined when it is not the workspace's: its kind and member count, what a page
   * needs) and a page of its members as `members` reads them, in one statement: a client's page costs one
   * round trip. A list of the other kind has no members of `kind`.
   */
  async withMembers(db: Executor, workspaceId: string, kind: ListKind, listId: string, range: MemberRange, join: MemberJoin): Promise<{ list: PageList | undefined; members: JoinedMember[] }> {
    type Row = PageList & Partial<JoinedRow>;
    const rows = await inIndexOrder(db, (trx) =>
      prepared<Row>(
        trx,
        trx('lists as l')
          // The page is compiled inside this statement (a query bound to a raw is inlined in parentheses), not on its own.
          .joinRaw('LEFT JOIN LATERAL ? m ON true', [trx.raw('?', [joinedPage(trx, kind, trx.ref('l.id'), range, join)])])
          .where({ 'l.workspace_id': workspaceId, 'l.id': listId })
          .orderBy([{ column: 'm.member_added_at' }, { column: 'm.member_id' }])
          .select('l.kind', 'l.member_count', 'm.*'),
      ),
    );
    if (!rows.length) return { list: undefined, members: [] };
    return { list: rows[0], members: rows.flatMap((r) => (r.member_id && r.member_added_at ? [{ id: r.member_id, added_at: r.member_added_at, row: r }] : [])) };
  }

  /** Which of `personIds` any people list of the workspace holds. */
  async listedPeople(db: Executor, workspaceId: string, personIds: string[]): Promise<string[]> {
    if (!personIds.length) return [];
    const rows: { person_id: string }[] = await db('list_people as m')
      .join('lists as l', 'l.id', 'm.list_id')
      .where('l.workspace_id', workspaceId)
      .whereIn('m.person_id', personIds)
      .distinct('m.person_id');
    return rows.map((r) => r.person_id);
  }

  /** The people of a list as a subquery, for the lead module to count or filter by without naming our tables. */
  peopleOf(db: Executor, listId: string): Knex.QueryBuilder {
    return db('list_people').where({ list_id: listId }).select('person_id');
  }
}
