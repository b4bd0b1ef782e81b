/**
 * Knex queries of the lead database: searches (filters -> SQL through the indexes of the leads
 * migration), look-ups by id, and reveal rows. Plain rows in and out.
 */
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock';
import { queryAll, selectList, type Executor, type RawResult } from '../../db';
import {
  COMPANY_COLUMNS,
  EMPLOYEE_RANGES,
  PEOPLE_DATA_OPTIONS,
  PERSON_COLUMNS,
  SHOWN_COMPANY_COLUMNS,
  SHOWN_PERSON_COLUMNS,
  type CompanyRow,
  type EmailStatus,
  type EmployeeRange,
  type PeopleDataOption,
  type PersonRow,
  type ShownCompanyRow,
  type ShownPersonRow,
} from './model';

export interface PeopleFilters {
  titles?: string[];
  seniorities?: string[];
  departments?: string[];
  locations?: string[];
  keywords?: string;
  companyDomains?: string[];
  companyNames?: string[];
  employeeRanges?: EmployeeRange[];
  industries?: string[];
  emailStatuses?: EmailStatus[];
}

export interface CompanyFilters {
  names?: string[];
  domains?: string[];
  industries?: string[];
  employeeRanges?: EmployeeRange[];
  locations?: string[];
  keywords?: string;
  technologies?: string[];
}

export interface Page {
  offset: number;
  limit: number;
}

/** Above this many expected matches, totalEntries is the planner's estimate. */
export const EXACT_COUNT_UP_TO = 5000;

const placeholders = (values: unknown[]) => values.map(() => '?').join(', ');

/** A person found by a search: the row, its company, and the data options revealed to the workspace. */
export interface FoundPerson {
  person: PersonRow;
  company: CompanyRow | undefined;
  revealed: PeopleDataOption[];
}

/** The company columns of a people search's row carry this prefix (people has columns of the same name). */
const COMPANY_PREFIX = 'company__';

function splitCompany(row: Record<string, unknown>): FoundPerson {
  const { revealed, ...rest } = row;
  const person: Record<string, unknown> = {};
  const company: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key.startsWith(COMPANY_PREFIX)) company[key.slice(COMPANY_PREFIX.length)] = value;
    else person[key] = value;
  }
  return {
    person: person as unknown as PersonRow,
    company: company.id ? (company as unknown as CompanyRow) : undefined,
    revealed: revealed as PeopleDataOption[],
  };
}

/**
 * A caller's row with joinShownPeople's (or joinShownCompanies') columns: each under a prefix, so that they
 * clash with none of the caller's own (a list's id and name, say).
 */
const SHOWN_PERSON_PREFIX = 'shown_person__';
const SHOWN_COMPANY_PREFIX = 'shown_company__';
const REVEALED = 'shown__revealed';
const prefixed = <C extends string>(prefix: string, columns: readonly C[]) =>
  columns.map((c) => [c, `${prefix}${c}`] as const);
const SHOWN_PERSON_KEYS = prefixed(SHOWN_PERSON_PREFIX, SHOWN_PERSON_COLUMNS);
const SHOWN_COMPANY_KEYS = prefixed(SHOWN_COMPANY_PREFIX, SHOWN_COMPANY_COLUMNS);
/** The select lists of those columns, written once (knex would quote some 30 names on every request). */
const SHOWN_COMPANY_SELECT = selectList(SHOWN_COMPANY_COLUMNS, 'shown_c', SHOWN_COMPANY_PREFIX);
const SHOWN_PERSON_SELECT = `${selectList(SHOWN_PERSON_COLUMNS, 'shown_p', SHOWN_PERSON_PREFIX)}, ${SHOWN_COMPANY_SELECT}`;

function pick<T>(row: Record<string, unknown>, keys: readonly (readonly [string, string])[]): T {
  const out: Record<string, unknown> = {};
  for (const [column, key] of keys) out[column] = row[key];
  return out as T;
}

/** A person of a joinShownPeople row: its columns, its company's (none without one), its revealed options in the spec's order. */
export function readShownPerson(row: Record<string, unknown>): {
  person: ShownPersonRow;
  company: ShownCompanyRow | undefined;
  revealed: PeopleDataOption[];
} {
  const revealed = row[REVEALED] as string[];
  return {
    person: pick(row, SHOWN_PERSON_KEYS),
    company: row[`${SHOWN_COMPANY_PREFIX}id`] === null ? undefined : pick(row, SHOWN_COMPANY_KEYS),
    revealed: revealed.length ? PEOPLE_DATA_OPTIONS.filter((o) => revealed.includes(o)) : [],
  };
}

/** A company of a joinShownCompanies row, and whether the workspace has seen it in full. */
export function readShownCompany(row: Record<string, unknown>): { company: ShownCompanyRow; revealed: boolean } {
  return { company: pick(row, SHOWN_COMPANY_KEYS), revealed: row[REVEALED] as boolean };
}

const lower = (values: string[]) => values.map((v) => v.trim().toLowerCase());

/** `column @@ (plainto_tsquery(a) || plainto_tsquery(b))`: any entry, every word of an entry. */
function anyWords(q: Knex.QueryBuilder, column: string, config: 'english' | 'simple', entries: string[]) {
  const parts = entries.map(() => `plainto_tsquery('${config}', ?)`).join(' || ');
  q.whereRaw(`${column} @@ (${parts})`, entries);
}

/**
 * Company-size brackets as the fewest `lo <= column <= hi` ranges: adjacent brackets (51-200 and
 * 201-500) become one range, which one index range scan serves (an OR of ranges makes the planner
 * AND bitmaps of every matching row instead).
 */
function employeeRanges(q: Knex.QueryBuilder, column: string, ranges: EmployeeRange[]) {
  const sorted = [...new Set(ranges)].map((r) => EMPLOYEE_RANGES[r]).sort((a, b) => a[0] - b[0]);
  const merged: [number, number | null][] = [];
  for (const [lo, hi] of sorted) {
    const last = merged[merged.length - 1];
    if (last && last[1] !== null && lo <= last[1] + 1) last[1] = hi === null ? null : Math.max(last[1], hi);
    else if (!last || last[1] !== null) merged.push([lo, hi]);
  }
  q.where((w) => {
    for (const [lo, hi] of merged) {
      w.orWhere((r) => {
        r.where(column, '>=', lo);
        if (hi !== null) r.andWhere(column, '<=', hi);
      });
    }
  });
}

export class LeadStore {
  /**
   * The counts of recent searches by their SQL, for `countCacheSeconds`: paging through a search, or
   * running a saved one again, repeats its count, which is half of a search's database time at a million
   * people, while the lead database changes only by imports from the admin CLI. Counts depend on the
   * filters alone, never on the workspace, so one cache serves every workspace.
   */
  private readonly counts: LRUCache<string, number> | undefined;

  constructor(clock: Clock, countCacheSeconds: number) {
    this.counts =
      countCacheSeconds > 0
        ? new LRUCache({ max: 10_000, ttl: countCacheSeconds * 1000, perf: { now: () => clock.now().getTime() } })
        : undefined;
  }

  /** The WHERE of a people search on `people`. */
  private peopleWhere(db: Executor, f: PeopleFilters): Knex.QueryBuilder {
    const q = db('people');
    if (f.titles?.length) anyWords(q, 'title_tsv', 'english', f.titles);
    if (f.seniorities?.length) q.whereIn('seniority', f.seniorities);
    if (f.departments?.length) q.whereIn('department', f.departments);
    if (f.locations?.length) q.whereRaw('location_terms && ?::text[]', [lower(f.locations)]);
    if (f.keywords) q.whereRaw(`keywords_tsv @@ plainto_tsquery('english', ?)`, [f.keywords]);
    if (f.companyDomains) q.whereRaw('lower(company_domain) = any(?::text[])', [f.companyDomains]);
    if (f.companyNames?.length) {
      q.whereIn('company_id', (sub) => {
        sub.select('id').from('companies');
        anyWords(sub, 'name_tsv', 'simple', f.companyNames!);
      });
    }
    if (f.employeeRanges?.length) employeeRanges(q, 'company_employee_count', f.employeeRanges);
    if (f.industries?.length) q.whereRaw('lower(company_industry) = any(?::text[])', [lower(f.industries)]);
    if (f.emailStatuses?.length) q.whereIn('email_status', f.emailStatuses);
    return q;
  }

  private companiesWhere(db: Executor, f: CompanyFilters): Knex.QueryBuilder {
    const q = db('companies');
    if (f.names?.length) anyWords(q, 'name_tsv', 'simple', f.names);
    if (f.domains) q.whereRaw('lower(domain) = any(?::text[])', [f.domains]);
    if (f.industries?.length) q.whereRaw('lower(industry) = any(?::text[])', [lower(f.industries)]);
    if (f.employeeRanges?.length) employeeRanges(q, 'employee_count', f.employeeRanges);
    if (f.locations?.length) q.whereRaw('location_terms && ?::text[]', [lower(f.locations)]);
    if (f.keywords) q.whereRaw(`keywords_tsv @@ plainto_tsquery('english', ?)`, [f.keywords]);
    if (f.technologies?.length) q.whereRaw('technologies && ?::text[]', [lower(f.technologies)]);
    return q;
  }

  /**
   * The page in result order (score desc, id). The ids are picked first, by a query that the search
   * indexes answer without reading the table (a deferred join), then only the page's rows are read.
   */
  private page(db: Executor, table: string, where: Knex.QueryBuilder, page: Page): Knex.QueryBuilder {
    const order = (prefix: string) => [
      { column: `${prefix}score`, order: 'desc' },
      { column: `${prefix}id`, order: 'asc' },
    ];
    const ids = where.select('id').orderBy(order('')).offset(page.offset).limit(page.limit);
    return db(table)
      .whereIn(`${table}.id`, ids)
      .orderBy(order(`${table}.`));
  }

  /**
   * A page of people with their companies and what the workspace has revealed of each, in the one
   * query that reads the page's rows (a search would otherwise ask for each separately).
   */
  async searchPeople(
    db: Executor,
    workspaceId: string,
    filters: PeopleFilters,
    page: Page,
  ): Promise<{ rows: FoundPerson[]; total: number }> {
    const rows = this.page(db, 'people', this.peopleWhere(db, filters), page)
      .leftJoin('companies', 'companies.id', 'people.company_id')
      .select([
        ...PERSON_COLUMNS.map((c) => `people.${c}`),
        ...COMPANY_COLUMNS.map((c) => `companies.${c} as ${COMPANY_PREFIX}${c}`),
        db.raw(
          'array(select data_option from people_reveals r where r.workspace_id = ? and r.person_id = people.id) as revealed',
          [workspaceId],
        ),
      ]);
    const [found, total] = await queryAll(db, [
      () => rows as Promise<Record<string, unknown>[]>,
      () => this.count(db, this.peopleWhere(db, filters)),
    ]);
    return { rows: found.map(splitCompany), total };
  }

  /** A page of companies, each with whether the workspace has seen it in full. */
  async searchCompanies(
    db: Executor,
    workspaceId: string,
    filters: CompanyFilters,
    page: Page,
  ): Promise<{ rows: (CompanyRow & { revealed: boolean })[]; total: number }> {
    const rows = this.page(db, 'companies', this.companiesWhere(db, filters), page).select([
      ...COMPANY_COLUMNS,
      db.raw(
        'exists(select 1 from company_reveals r where r.workspace_id = ? and r.company_id = companies.id) as revealed',
        [workspaceId],
      ),
    ]);
    const [found, total] = await queryAll(db, [
      () => rows as Promise<(CompanyRow & { revealed: boolean })[]>,
      () => this.count(db, this.companiesWhere(db, filters)),
    ]);
    return { rows: found, total };
  }

  /**
   * The number of matches: exact when the planner expects at most EXACT_COUNT_UP_TO rows, else the
   * planner's estimate. Counting a large match exactly visits every matching row (hundreds of ms on
   * a million people) while the page itself needs only a few. Recent counts are reused for the same
   * filters (see the constructor).
   */
  private async count(db: Executor, q: Knex.QueryBuilder): Promise<number> {
    const { sql, bindings } = q.clone().select(db.raw('1')).toSQL();
    const key = `${sql}\n${JSON.stringify(bindings)}`;
    const counted = this.counts?.get(key);
    if (counted !== undefined) return counted;
    const total = await this.countNow(db, q, sql, bindings);
    this.counts?.set(key, total);
    return total;
  }

  private async countNow(
    db: Executor,
    q: Knex.QueryBuilder,
    sql: string,
    bindings: readonly unknown[],
  ): Promise<number> {
    const explained = await db.raw<RawResult<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>>(
      `EXPLAIN (FORMAT JSON) ${sql}`,
      bindings as Knex.RawBinding[],
    );
    const estimate = Math.round(Number(explained.rows[0]['QUERY PLAN'][0].Plan['Plan Rows']));
    if (estimate > EXACT_COUNT_UP_TO) return estimate;
    const row = await q.count<{ count: string }[]>({ count: '*' }).first();
    return Number(row?.count ?? 0);
  }

  /** See LeadService.joinShownPeople; readShownPerson reads the columns back. */
  joinShownPeople(db: Executor, q: Knex.QueryBuilder, workspaceId: string, personId: string): Knex.QueryBuilder {
    return q
      .join('people as shown_p', 'shown_p.id', personId)
      .leftJoin('companies as shown_c', 'shown_c.id', 'shown_p.company_id')
      .select(
        db.raw(
          `${SHOWN_PERSON_SELECT}, array(select data_option from people_reveals r where r.workspace_id = ? and r.person_id = shown_p.id) as ${REVEALED}`,
          [workspaceId],
        ),
      );
  }

  /** See LeadService.joinShownCompanies; readShownCompany reads the columns back. */
  joinShownCompanies(db: Executor, q: Knex.QueryBuilder, workspaceId: string, companyId: string): Knex.QueryBuilder {
    return q
      .join('companies as shown_c', 'shown_c.id', companyId)
      .select(
        db.raw(
          `${SHOWN_COMPANY_SELECT}, exists(select 1 from company_reveals r where r.workspace_id = ? and r.company_id = shown_c.id) as ${REVEALED}`,
          [workspaceId],
        ),
      );
  }

  async companiesByIds(db: Executor, ids: string[]): Promise<Map<string, CompanyRow>> {
    if (!ids.length) return new Map();
    const rows = await db('companies')
      .select<CompanyRow[]>(COMPANY_COLUMNS)
      .whereIn('id', [...new Set(ids)]);
    return new Map(rows.map((r) => [r.id, r]));
  }

  async peopleByIds(db: Executor, ids: string[]): Promise<PersonRow[]> {
    return ids.length ? this.peopleNamed(db, ids).select<PersonRow[]>(PERSON_COLUMNS) : [];
  }

  /** The people `ids` names with the columns a person is shown from. */
  async shownPeopleByIds(db: Executor, ids: string[]): Promise<ShownPersonRow[]> {
    return ids.length ? this.peopleNamed(db, ids).select<ShownPersonRow[]>(SHOWN_PERSON_COLUMNS) : [];
  }

  /** The people `ids` names, by id. */
  private peopleNamed(db: Executor, ids: string[]) {
    return db('people')
      .whereIn('id', [...new Set(ids)])
      .orderBy('id');
  }

  /**
   * Records reveals; returns the (person, option) pairs that were new, i.e. to be charged. A pair
   * another transaction is inserting waits for it, so two concurrent requests never both charge it.
   */
  async insertPersonReveals(
    trx: Executor,
    workspaceId: string,
    pairs: { personId: string; option: string }[],
    at: Date,
  ): Promise<{ person_id: string; data_option: string }[]> {
    if (!pairs.length) return [];
    // One order for every request, so concurrent inserts take row locks in the same order.
    const rows = [...pairs]
      .sort((a, b) =>
        a.personId === b.personId ? a.option.localeCompare(b.option) : a.personId.localeCompare(b.personId),
      )
      .map((p) => ({ workspace_id: workspaceId, person_id: p.personId, data_option: p.option, revealed_at: at }));
    return trx('people_reveals')
      .insert(rows)
      .onConflict(['workspace_id', 'person_id', 'data_option'])
      .ignore()
      .returning(['person_id', 'data_option']);
  }

  async insertCompanyReveals(trx: Executor, workspaceId: string, companyIds: string[], at: Date): Promise<string[]> {
    if (!companyIds.length) return [];
    const rows = [...new Set(companyIds)]
      .sort()
      .map((id) => ({ workspace_id: workspaceId, company_id: id, revealed_at: at }));
    const inserted: { company_id: string }[] = await trx('company_reveals')
      .insert(rows)
      .onConflict(['workspace_id', 'company_id'])
      .ignore()
      .returning(['company_id']);
    return inserted.map((r) => r.company_id);
  }

  /** Which of `ids` exist in the lead database. */
  async existingIds(db: Executor, entity: 'people' | 'companies', ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows: { id: string }[] = await db(entity).whereIn('id', ids).select('id');
    return new Set(rows.map((r) => r.id));
  }

  /** The data options each person has revealed to the workspace, in the spec's order (like a search answer). */
  async revealedOptions(
    db: Executor,
    workspaceId: string,
    personIds: string[],
  ): Promise<Map<string, PeopleDataOption[]>> {
    const out = new Map<string, PeopleDataOption[]>();
    if (!personIds.length) return out;
    const rows: { person_id: string; data_option: PeopleDataOption }[] = await db('people_reveals')
      .where({ workspace_id: workspaceId })
      .whereIn('person_id', personIds)
      .select('person_id', 'data_option');
    for (const r of rows) out.set(r.person_id, [...(out.get(r.person_id) ?? []), r.data_option]);
    for (const [id, options] of out)
      out.set(
        id,
        PEOPLE_DATA_OPTIONS.filter((o) => options.includes(o)),
      );
    return out;
  }

  /** People among `personIds` (a subquery) with a work email not yet revealed to the workspace. */
  async countUnrevealedEmails(db: Executor, workspaceId: string, personIds: Knex.QueryBuilder): Promise<number> {
    const [{ n }] = await db('people as p')
      .whereIn('p.id', personIds)
      .whereNotNull('p.work_email')
      .whereNotExists((q) => {
        q.select(db.raw('1'))
          .from('people_reveals as r')
          .where('r.workspace_id', workspaceId)
          .whereRaw('r.person_id = p.id')
          .andWhere('r.data_option', 'workEmailReveal');
      })
      .count<{ n: string }[]>({ n: '*' });
    return Number(n);
  }

  // Enrichment look-ups, batched per rule through the leads migration's lower(...) indexes; keys come lower-cased.
  async byWorkEmails(db: Executor, emails: string[]): Promise<PersonRow[]> {
    if (!emails.length) return [];
    return db('people')
      .select(PERSON_COLUMNS)
      .whereRaw(`lower(work_email) IN (${placeholders(emails)})`, emails);
  }

  async byLinkedinUrls(db: Executor, urls: string[]): Promise<PersonRow[]> {
    if (!urls.length) return [];
    return db('people')
      .select(PERSON_COLUMNS)
      .whereRaw(`lower(linkedin_url) IN (${placeholders(urls)})`, urls);
  }

  async byNames(db: Executor, names: { first: string; last: string }[]): Promise<PersonRow[]> {
    if (!names.length) return [];
    const tuples = names.map(() => '(?, ?)').join(', ');
    return db('people')
      .select(PERSON_COLUMNS)
      .whereRaw(
        `(lower(last_name), lower(first_name)) IN (${tuples})`,
        names.flatMap((n) => [n.last, n.first]),
      );
  }
}
