/** Lists and their memberships: plain rows. Members are ordered by (added_at, member id) everywhere. */
import type { Knex } from 'knex';
import {
  columnsOf,
  isEmbedded,
  pageTotal,
  prepared,
  selectList,
  TOTAL_COLUMN,
  type Executor,
  type RawResult,
} from '../../db';
import type { Position } from '../../platform/cursor';

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

const LIST_SELECT = selectList(
  columnsOf<ListRow>({
    id: true,
    workspace_id: true,
    kind: true,
    name: true,
    member_count: true,
    created_at: true,
    updated_at: true,
  }),
);

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

/**
 * Members per block of a list's member order (list_member_blocks, see its migration): a page by `skip` walks
 * at most twice this many members past its block's first key; a block grown past twice this is cut again.
 */
export const BLOCK_SIZE = 1000;

/**
 * The block of `listId` that holds the member at offset `skip` (alias `b`): its first key and `before`, the
 * members of the blocks before it. None when the list holds `skip` members or fewer. The running sum reads one
 * row per block: a thousand at a million members.
 */
function blockAt(db: Executor, listId: string | Knex.Raw, skip: number) {
  const blocks = db('list_member_blocks')
    .where('list_id', listId)
    .select(
      'first_added_at',
      'first_member_id',
      'member_count',
      db.raw(
        'sum(member_count) OVER (ORDER BY first_added_at, first_member_id ROWS UNBOUNDED PRECEDING) - member_count AS before',
      ),
    );
  return db
    .from(blocks.as('s'))
    .where(db.raw('before + member_count'), '>', skip)
    .orderBy([{ column: 'first_added_at' }, { column: 'first_member_id' }])
    .limit(1)
    .select('first_added_at', 'first_member_id', 'before');
}

/**
 * The member rows of a page in list order, of the list `listId` names (a value, or the outer query's column).
 * A page by `skip` starts at the first key of the block that holds it and skips only the members of that block
 * before it (fewer than 2 * BLOCK_SIZE), not every member of the list before it.
 */
function memberPage(db: Executor, kind: ListKind, listId: string | Knex.Raw, range: MemberRange) {
  const { table, column } = MEMBERS[kind];
  const q = db(table)
    .select<MemberRef[]>(`${column} as id`, 'added_at')
    .where('list_id', listId)
    .orderBy([{ column: 'added_at' }, { column }])
    .limit(range.limit);
  if (range.after) q.whereRaw(`(added_at, ${column}) > (?, ?)`, [range.after.at, range.after.id]);
  if (!range.skip) return q;
  // knex compiles a raw offset (its query builder checks for one); its types declare a number only.
  const offset = db.raw('? - b.before', [range.skip]) as unknown as number;
  q.whereRaw(`(added_at, ${column}) >= (b.first_added_at, b.first_member_id)`).offset(offset);
  return db
    .from(blockAt(db, listId, range.skip).as('b'))
    .joinRaw('JOIN LATERAL ? p ON true', [db.raw('?', [q])])
    .select<MemberRef[]>('p.id', 'p.added_at');
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

function joinedPage(
  db: Executor,
  kind: ListKind,
  listId: string | Knex.Raw,
  range: MemberRange,
  join: MemberJoin,
): Knex.QueryBuilder {
  const page = db
    .from(memberPage(db, kind, listId, range).as('m'))
    .select('m.id as member_id', 'm.added_at as member_added_at');
  return join(page, 'm.id');
}

const joined = (row: JoinedRow): JoinedMember => ({ id: row.member_id, added_at: row.member_added_at, row });

/** The key of a list's first block: before every member's (added_at, member id). */
const FIRST_KEY = { at: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

/**
 * Adds `sign` (1 or -1) per member to the count of the block that holds it (the last whose first key is not
 * after the member's), in one statement; a list's first block is made by its first add. Returns the counts of
 * the blocks changed. The caller holds the list's lock.
 */
async function countInBlocks(db: Executor, listId: string, members: MemberRef[], sign: 1 | -1): Promise<number[]> {
  if (!members.length) return [];
  const { rows } = await db.raw<RawResult<{ member_count: number }>>(
    `INSERT INTO list_member_blocks AS b (list_id, first_added_at, first_member_id, member_count)
     SELECT ?, coalesce(k.first_added_at, ?), coalesce(k.first_member_id, ?), count(*) * ?
       FROM unnest(?::timestamptz[], ?::uuid[]) AS m(added_at, id)
       LEFT JOIN LATERAL (
         SELECT first_added_at, first_member_id FROM list_member_blocks
          WHERE list_id = ? AND (first_added_at, first_member_id) <= (m.added_at, m.id)
          ORDER BY first_added_at DESC, first_member_id DESC LIMIT 1) k ON true
      GROUP BY 2, 3
     ON CONFLICT (list_id, first_added_at, first_member_id) DO UPDATE SET member_count = b.member_count + excluded.member_count
     RETURNING b.member_count`,
    [listId, FIRST_KEY.at, FIRST_KEY.id, sign, members.map((m) => m.added_at), members.map((m) => m.id), listId],
  );
  return rows.map((r) => r.member_count);
}

/**
 * Cuts every block of the list holding more than `over` members into blocks of BLOCK_SIZE (the first keeps its
 * key), in one statement: a block's members are the `member_count` from its first key on.
 */
async function cutBlocks(db: Executor, kind: ListKind, listId: string, over: number): Promise<void> {
  const { table, column } = MEMBERS[kind];
  await inIndexOrder(db, (trx) =>
    trx.raw(
      `INSERT INTO list_member_blocks AS b (list_id, first_added_at, first_member_id, member_count)
     SELECT big.list_id, CASE WHEN m.i = 0 THEN big.first_added_at ELSE m.added_at END, CASE WHEN m.i = 0 THEN big.first_member_id ELSE m.id END,
            least(?, big.member_count - m.i)
       FROM list_member_blocks big
       CROSS JOIN LATERAL (
         SELECT added_at, ?? AS id, row_number() OVER (ORDER BY added_at, ??) - 1 AS i FROM ??
          WHERE list_id = big.list_id AND (added_at, ??) >= (big.first_added_at, big.first_member_id)
          ORDER BY added_at, ?? LIMIT big.member_count) m
      WHERE big.list_id = ? AND big.member_count > ? AND m.i % ? = 0
     ON CONFLICT (list_id, first_added_at, first_member_id) DO UPDATE SET member_count = excluded.member_count`,
      [BLOCK_SIZE, column, column, table, column, column, listId, over, BLOCK_SIZE],
    ),
  );
}

/**
 * Builds a list's blocks again from its member rows, for rows written by SQL (the benchmarks' bulk lists) as
 * the list's adds would have left them.
 */
export async function rebuildMemberBlocks(db: Executor, kind: ListKind, listId: string): Promise<void> {
  const { table } = MEMBERS[kind];
  await db('list_member_blocks').where({ list_id: listId }).delete();
  await db.raw(
    `INSERT INTO list_member_blocks (list_id, first_added_at, first_member_id, member_count)
     SELECT ?, ?::timestamptz, ?::uuid, count(*) FROM ?? WHERE list_id = ? HAVING count(*) > 0`,
    [listId, FIRST_KEY.at, FIRST_KEY.id, table, listId],
  );
  await cutBlocks(db, kind, listId, BLOCK_SIZE);
}

export class ListStore {
  async find(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
    return db('lists').where({ workspace_id: workspaceId, id }).first<ListRow | undefined>();
  }

  /** Locks the list row, so deletes and membership changes of one list happen one after another. */
  async lock(db: Executor, workspaceId: string, id: string): Promise<ListRow | undefined> {
    return db('lists').where({ workspace_id: workspaceId, id }).forUpdate().first<ListRow | undefined>();
  }

  async page(
    db: Executor,
    workspaceId: string,
    page: { limit: number; skip: number; kind?: ListKind },
  ): Promise<{ rows: ListRow[]; total: number }> {
    const filtered = () => db('lists').where({ workspace_id: workspaceId, ...(page.kind ? { kind: page.kind } : {}) });
    const rows = await prepared<ListRow & { total: string }>(
      db,
      filtered()
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .offset(page.skip)
        .limit(page.limit)
        .select(db.raw(`${LIST_SELECT}, ${TOTAL_COLUMN}`)),
    );
    const total = await pageTotal(rows, page.skip, async () => {
      const [{ count }] = await filtered().count<{ count: string }[]>({ count: '*' });
      return Number(count);
    });
    return { rows, total };
  }

  async count(db: Executor, workspaceId: string): Promise<number> {
    const [{ count }] = await db('lists')
      .where({ workspace_id: workspaceId })
      .count<{ count: string }[]>({ count: '*' });
    return Number(count);
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

  /** Adds memberships and counts them in their blocks; returns the ids that were not members yet. */
  async addMembers(db: Executor, kind: ListKind, listId: string, ids: string[], at: Date): Promise<string[]> {
    if (!ids.length) return [];
    const { table, column } = MEMBERS[kind];
    // One order for every request, so concurrent inserts into one list take row locks in the same order.
    const rows = [...ids].sort().map((id) => ({ list_id: listId, [column]: id, added_at: at }));
    const inserted: Record<string, string>[] = await db(table)
      .insert(rows)
      .onConflict(['list_id', column])
      .ignore()
      .returning(column);
    const added = inserted.map((r) => r[column]);
    const counts = await countInBlocks(
      db,
      listId,
      added.map((id) => ({ id, added_at: at })),
      1,
    );
    if (counts.some((n) => n > 2 * BLOCK_SIZE)) await cutBlocks(db, kind, listId, 2 * BLOCK_SIZE);
    return added;
  }

  /** Removes memberships and uncounts them from their blocks; returns the ids that were members. */
  async removeMembers(db: Executor, kind: ListKind, listId: string, ids: string[]): Promise<string[]> {
    const { table, column } = MEMBERS[kind];
    const members = await db(table)
      .where({ list_id: listId })
      .whereIn(column, ids)
      .delete()
      .returning<MemberRef[]>([`${column} as id`, 'added_at']);
    const counts = await countInBlocks(db, listId, members, -1);
    // An empty block is only a row more for every page by skip to sum (an add makes the first block again).
    if (counts.includes(0)) await db('list_member_blocks').where({ list_id: listId, member_count: 0 }).delete();
    return members.map((m) => m.id);
  }

  /**
   * Members in list order, with the rows `join` adds: a page by offset (`skip`), or the page after `after`
   * (keyset: a client's cursor, and exports and sends that walk a whole list in constant memory).
   */
  async members(
    db: Executor,
    kind: ListKind,
    listId: string,
    range: MemberRange,
    join: MemberJoin = (page) => page,
  ): Promise<JoinedMember[]> {
    const rows = await inIndexOrder(
      db,
      (trx) =>
        joinedPage(trx, kind, listId, range, join).orderBy([{ column: 'm.added_at' }, { column: 'm.id' }]) as Promise<
          JoinedRow[]
        >,
    );
    return rows.map(joined);
  }

  /**
   * The workspace's list (undefined when it is not the workspace's: its kind and member count, what a page
   * needs) and a page of its members as `members` reads them, in one statement: a client's page costs one
   * round trip. A list of the other kind has no members of `kind`.
   */
  async withMembers(
    db: Executor,
    workspaceId: string,
    kind: ListKind,
    listId: string,
    range: MemberRange,
    join: MemberJoin,
  ): Promise<{ list: PageList | undefined; members: JoinedMember[] }> {
    type Row = PageList & Partial<JoinedRow>;
    const rows = await inIndexOrder(db, (trx) =>
      prepared<Row>(
        trx,
        trx('lists as l')
          // The page is compiled inside this statement (a query bound to a raw is inlined in parentheses), not on its own.
          .joinRaw('LEFT JOIN LATERAL ? m ON true', [
            trx.raw('?', [joinedPage(trx, kind, trx.ref('l.id'), range, join)]),
          ])
          .where({ 'l.workspace_id': workspaceId, 'l.id': listId })
          .orderBy([{ column: 'm.member_added_at' }, { column: 'm.member_id' }])
          .select('l.kind', 'l.member_count', 'm.*'),
      ),
    );
    if (!rows.length) return { list: undefined, members: [] };
    return {
      list: rows[0],
      members: rows.flatMap((r) =>
        r.member_id && r.member_added_at ? [{ id: r.member_id, added_at: r.member_added_at, row: r }] : [],
      ),
    };
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
