/** Lists and their memberships: plain rows. Members are ordered by (added_at, member id) everywhere. */
import type { Db } from '../../db';
import { COMPANY_COLUMNS, PEOPLE_DATA_OPTIONS, PERSON_COLUMNS, type CompanyRow, type PeopleDataOption, type PersonRow } from '../leads/model';

export type ListKind = 'people' | 'company';

export interface ListRow {
  id: string;
  workspace_id: string;
  kind: ListKind;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export type ListView = ListRow & { member_count: number };

export type PersonMemberRow = PersonRow & { added_at: Date };
export type CompanyMemberRow = CompanyRow & { added_at: Date };

/** Where a batch of members ends, to read the next one after it. */
export interface MemberCursor {
  addedAt: Date;
  id: string;
}

const MEMBERS = {
  people: { table: 'list_people', column: 'person_id', entity: 'people', columns: PERSON_COLUMNS },
  company: { table: 'list_companies', column: 'company_id', entity: 'companies', columns: COMPANY_COLUMNS },
} as const;

/**
 * Runs a member query with sorting disabled, so it walks the (list_id, added_at, member id) index and stops
 * after `limit` rows. Without table statistics (the embedded database never auto-analyzes; a bulk load on
 * PostgreSQL before autovacuum) the planner would otherwise sort the whole list for every batch. SET LOCAL
 * needs a transaction: the caller's (switched back on afterwards), or a short one of our own.
 */
async function inIndexOrder<T>(db: Db, run: (db: Db) => Promise<T>): Promise<T> {
  if (!db.isTransaction) return db.transaction((trx) => inIndexOrder(trx, run));
  await db.raw('SET LOCAL enable_sort = off');
  const result = await run(db);
  await db.raw('SET LOCAL enable_sort = on');
  return result;
}

export class ListStore {
  private views(db: Db) {
    return db('lists as l').select(
      'l.*',
      db.raw(`CASE l.kind
        WHEN 'people' THEN (SELECT count(*) FROM list_people m WHERE m.list_id = l.id)
        ELSE (SELECT count(*) FROM list_companies m WHERE m.list_id = l.id) END::int AS member_count`),
    );
  }

  async find(db: Db, workspaceId: string, id: string): Promise<ListView | undefined> {
    const [row] = await this.views(db).where({ 'l.workspace_id': workspaceId, 'l.id': id });
    return row;
  }

  /** Locks the list row, so deletes and membership changes of one list happen one after another. */
  async lock(db: Db, workspaceId: string, id: string): Promise<ListRow | undefined> {
    return db('lists').where({ workspace_id: workspaceId, id }).forUpdate().first();
  }

  async page(db: Db, workspaceId: string, page: { limit: number; skip: number; kind?: ListKind }): Promise<{ rows: ListView[]; total: number }> {
    const filter = { 'l.workspace_id': workspaceId, ...(page.kind ? { 'l.kind': page.kind } : {}) };
    const [rows, [{ total }]] = await Promise.all([
      this.views(db).where(filter).orderBy([{ column: 'l.created_at', order: 'desc' }, { column: 'l.id', order: 'desc' }]).offset(page.skip).limit(page.limit),
      db('lists as l').where(filter).count<{ total: string }[]>({ total: '*' }),
    ]);
    return { rows, total: Number(total) };
  }

  async insert(db: Db, row: ListRow): Promise<void> {
    await db('lists').insert(row);
  }

  async delete(db: Db, id: string): Promise<void> {
    await db('lists').where({ id }).delete();
  }

  async touch(db: Db, id: string, at: Date): Promise<void> {
    await db('lists').where({ id }).update({ updated_at: at });
  }

  /** Which of `ids` exist in the lead database (people or companies). */
  async existingIds(db: Db, kind: ListKind, ids: string[]): Promise<Set<string>> {
    const rows: { id: string }[] = await db(MEMBERS[kind].entity).whereIn('id', ids).select('id');
    return new Set(rows.map((r) => r.id));
  }

  /** Adds memberships; returns the ids that were not members yet. */
  async addMembers(db: Db, kind: ListKind, listId: string, ids: string[], at: Date): Promise<string[]> {
    if (!ids.length) return [];
    const { table, column } = MEMBERS[kind];
    // One order for every request, so concurrent inserts into one list take row locks in the same order.
    const rows = [...ids].sort().map((id) => ({ list_id: listId, [column]: id, added_at: at }));
    const inserted: Record<string, string>[] = await db(table).insert(rows).onConflict(['list_id', column]).ignore().returning(column);
    return inserted.map((r) => r[column]);
  }

  /** Removes memberships; returns the ids that were members. */
  async removeMembers(db: Db, kind: ListKind, listId: string, ids: string[]): Promise<string[]> {
    const { table, column } = MEMBERS[kind];
    const removed: Record<string, string>[] = await db(table).where({ list_id: listId }).whereIn(column, ids).delete().returning(column);
    return removed.map((r) => r[column]);
  }

  /**
   * Members with their lead-database rows, in list order: a page by offset (`skip`), or the batch after
   * `after` (keyset, for exports and sends that walk a whole list in constant memory).
   */
  members(db: Db, kind: 'people', listId: string, range: { limit: number; skip?: number; after?: MemberCursor | null }): Promise<PersonMemberRow[]>;
  members(db: Db, kind: 'company', listId: string, range: { limit: number; skip?: number; after?: MemberCursor | null }): Promise<CompanyMemberRow[]>;
  members(db: Db, kind: ListKind, listId: string, range: { limit: number; skip?: number; after?: MemberCursor | null }): Promise<(PersonMemberRow | CompanyMemberRow)[]> {
    const { table, column, entity, columns } = MEMBERS[kind];
    return inIndexOrder(db, (trx) => {
      const q = trx(`${table} as m`)
        .join(`${entity} as e`, 'e.id', `m.${column}`)
        .where('m.list_id', listId)
        .select([...columns.map((c) => `e.${c}`), 'm.added_at'])
        .orderBy([{ column: 'm.added_at' }, { column: `m.${column}` }])
        .limit(range.limit);
      if (range.after) q.whereRaw(`(m.added_at, m.${column}) > (?, ?)`, [range.after.addedAt, range.after.id]);
      if (range.skip) q.offset(range.skip);
      return q;
    });
  }

  /** The data options each person has revealed to the workspace. */
  async revealedOptions(db: Db, workspaceId: string, personIds: string[]): Promise<Map<string, PeopleDataOption[]>> {
    const out = new Map<string, PeopleDataOption[]>();
    if (!personIds.length) return out;
    const rows: { person_id: string; data_option: PeopleDataOption }[] = await db('people_reveals')
      .where({ workspace_id: workspaceId })
      .whereIn('person_id', personIds)
      .select('person_id', 'data_option');
    for (const r of rows) out.set(r.person_id, [...(out.get(r.person_id) ?? []), r.data_option]);
    // In the spec's order of data options, like a search answer.
    for (const [id, options] of out) out.set(id, PEOPLE_DATA_OPTIONS.filter((o) => options.includes(o)));
    return out;
  }

  /** The companies the workspace has seen in full. */
  async revealedCompanies(db: Db, workspaceId: string, companyIds: string[]): Promise<Set<string>> {
    if (!companyIds.length) return new Set();
    const rows: { company_id: string }[] = await db('company_reveals').where({ workspace_id: workspaceId }).whereIn('company_id', companyIds).select('company_id');
    return new Set(rows.map((r) => r.company_id));
  }

  /** Members with a work email that is not revealed to the workspace yet: what sending the list will charge. */
  async countUnrevealedEmails(db: Db, workspaceId: string, listId: string): Promise<number> {
    const [{ n }] = await db('list_people as m')
      .join('people as p', 'p.id', 'm.person_id')
      .where('m.list_id', listId)
      .whereNotNull('p.work_email')
      .whereNotExists((q) =>
        q.select(db.raw('1')).from('people_reveals as r').where('r.workspace_id', workspaceId).whereRaw('r.person_id = p.id').andWhere('r.data_option', 'workEmailReveal'),
      )
      .count<{ n: string }[]>({ n: '*' });
    return Number(n);
  }
}
