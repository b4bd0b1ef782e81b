/** Plain rows for contacts. Every query is scoped to a workspace; callers pass their transaction. */
import type { Knex } from 'knex';
import type { Executor } from '../../db';
import { UNFINISHED_STATUSES } from './statuses';

export type CustomValue = string | number | boolean | null;

export interface ContactRow {
  id: string;
  workspace_id: string;
  campaign_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  job_title: string | null;
  phone: string | null;
  website: string | null;
  linkedin_url: string | null;
  /** The lead's IANA zone, canonical; null: the campaign schedule's zone applies. */
  timezone: string | null;
  custom_variables: Record<string, CustomValue>;
  status: string;
  lead_status: string | null;
  person_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Rows per statement: 1000 rows of 17 columns stay far below PostgreSQL's 65535 parameters. */
const CHUNK = 1000;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export type ContactPatch = Partial<Pick<ContactRow, 'custom_variables' | 'lead_status' | 'updated_at'>>;

/** jsonb goes in as text: the drivers would turn a JS array into a PostgreSQL array, not JSON. */
function toDb<T extends Partial<ContactRow>>(row: T) {
  return row.custom_variables === undefined ? row : { ...row, custom_variables: JSON.stringify(row.custom_variables) };
}

/** The filters of a contact list and of a bulk action (the spec's ContactFilter), dates as the client sent them. */
export interface ListFilter {
  campaignId?: string;
  status?: string;
  leadStatus?: string;
  intent?: string;
  step?: number;
  paused?: boolean;
  subsequenceId?: string;
  search?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export type ListSort = 'createdAt' | 'updatedAt' | 'email';

/** Where a page starts: strictly after this sort key and id, in the page's order. */
export interface ListAfter {
  key: Date | string;
  id: string;
}

/** A page's order, its start and its size. */
export interface ListPage {
  sort: ListSort;
  order: 'asc' | 'desc';
  after?: ListAfter;
  limit: number;
}

/** A listed contact with where it stands: the engine's progress row, its campaign's status and its latest reply's intent. */
export interface ListedRow extends ContactRow {
  progress_state: string | null;
  progress_step: number | null;
  progress_due_at: Date | null;
  progress_subsequence_id: string | null;
  campaign_status: string;
  last_intent: string | null;
}

/** The text `search` looks in, lower-cased; the trigram index contacts_search is on this same expression. */
const SEARCH_TEXT =
  "lower(c.email || ' ' || coalesce(c.first_name, '') || ' ' || coalesce(c.last_name, '') || ' ' || coalesce(c.company_name, ''))";

/** Contacts a search looks among first, in the sort's order, before it asks the trigram index. */
const SEARCH_WINDOW = 5_000;

/** A contact's latest reply intent. */
const LAST_INTENT = 'select r.intent from reply_intents r where r.contact_id = c.id order by r.replied_at desc limit 1';

const SORT_COLUMN: Record<ListSort, string> = {
  createdAt: 'c.created_at',
  updatedAt: 'c.updated_at',
  email: 'lower(c.email)',
};

/** `%`, `_` and `\` stand for themselves in a LIKE pattern once escaped. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

export class ContactStore {
  async findById(db: Executor, workspaceId: string, id: string, forUpdate = false): Promise<ContactRow | undefined> {
    const q = db<ContactRow>('contacts').where({ id, workspace_id: workspaceId }).first();
    return forUpdate ? q.forUpdate() : q;
  }

  async findByEmail(
    db: Executor,
    workspaceId: string,
    campaignId: string,
    email: string,
    forUpdate = false,
  ): Promise<ContactRow | undefined> {
    const q = db<ContactRow>('contacts')
      .where({ campaign_id: campaignId, workspace_id: workspaceId })
      .whereRaw('lower(email) = ?', [email.toLowerCase()])
      .first();
    return forUpdate ? q.forUpdate() : q;
  }

  /*
   * The two look-ups by address probe the index once per distinct address (a LATERAL subquery the planner
   * cannot flatten: LIMIT 1, OFFSET 0), never a scan of the whole campaign or workspace. With an IN list of
   * 1,000 the planner read every contact of the campaign (a seq scan at 100,000 contacts with fresh statistics,
   * a bitmap scan when they lagged behind a bulk import), so a batch cost time in proportion to the contacts
   * already there.
   */

  /** The contacts of a campaign holding any of these (lower-case) addresses. */
  async findByEmails(db: Executor, campaignId: string, emails: string[]): Promise<Pick<ContactRow, 'id' | 'email'>[]> {
    if (!emails.length) return [];
    const { rows } = await db.raw<{ rows: Pick<ContactRow, 'id' | 'email'>[] }>(
      `select c.id, lower(c.email) as email from unnest(?::text[]) as wanted(email)
       cross join lateral (select id, email from contacts where campaign_id = ? and lower(email) = wanted.email limit 1) c`,
      [[...new Set(emails)], campaignId],
    );
    return rows;
  }

  /** Which campaigns of the workspace hold each of these (lower-case) addresses. */
  async campaignsHolding(
    db: Executor,
    workspaceId: string,
    emails: string[],
  ): Promise<{ email: string; campaign_id: string }[]> {
    if (!emails.length) return [];
    const { rows } = await db.raw<{ rows: { email: string; campaign_id: string }[] }>(
      `select wanted.email, c.campaign_id from unnest(?::text[]) as wanted(email)
       cross join lateral (select campaign_id from contacts where workspace_id = ? and lower(email) = wanted.email offset 0) c`,
      [[...new Set(emails)], workspaceId],
    );
    return rows;
  }

  /**
   * Inserts the rows and returns those inserted. A row whose address a concurrent request has just
   * taken is skipped (ON CONFLICT DO NOTHING) instead of failing the whole batch.
   */
  async insertNew(db: Executor, rows: ContactRow[]): Promise<ContactRow[]> {
    const inserted: ContactRow[] = [];
    for (const chunk of chunks(rows))
      inserted.push(
        ...(await db('contacts').insert(chunk.map(toDb)).onConflict().ignore().returning<ContactRow[]>('*')),
      );
    return inserted;
  }

  async update(db: Executor, workspaceId: string, id: string, patch: ContactPatch): Promise<ContactRow> {
    const [row] = await db('contacts')
      .where({ id, workspace_id: workspaceId })
      .update(toDb(patch))
      .returning<ContactRow[]>('*');
    return row;
  }

  async delete(db: Executor, workspaceId: string, id: string): Promise<void> {
    await db('contacts').where({ id, workspace_id: workspaceId }).delete();
  }

  /** Contacts per status (of one campaign), from the counters the triggers on contacts keep (migration 20261127020000). */
  async countByStatus(db: Executor, workspaceId: string, campaignId?: string): Promise<Record<string, number>> {
    const q = db('contact_counts').where('workspace_id', workspaceId);
    if (campaignId) q.andWhere('campaign_id', campaignId);
    const rows: { status: string; n: number }[] = await q
      .groupBy('status')
      .havingRaw('sum(n) > 0')
      .select('status', db.raw('sum(n)::int AS n'));
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  async countInWorkspace(db: Executor, workspaceId: string): Promise<number> {
    const row = await db('contact_counts')
      .where({ workspace_id: workspaceId })
      .first<{ n: number } | undefined>(db.raw('coalesce(sum(n), 0)::int AS n'));
    return row?.n ?? 0;
  }

  /** Contacts of the campaign still to be mailed (active or paused), from the counters. */
  async unfinishedInCampaign(db: Executor, campaignId: string): Promise<number> {
    const row = await db('contact_counts')
      .where({ campaign_id: campaignId })
      .whereIn('status', UNFINISHED_STATUSES)
      .first<{ n: number } | undefined>(db.raw('coalesce(sum(n), 0)::int AS n'));
    return row?.n ?? 0;
  }

  /** Sets `status` on those of `ids` whose status is one of `from`; returns the ids changed. */
  async setStatusIf(
    db: Executor,
    workspaceId: string,
    ids: string[],
    status: string,
    from: string[],
    at: Date,
  ): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await db('contacts')
      .where('workspace_id', workspaceId)
      .whereIn('id', ids)
      .whereIn('status', from)
      .update({ status, updated_at: at })
      .returning('id');
    return rows.map((r: { id: string }) => r.id);
  }

  /** The workspace's contacts among `ids` (of `campaignId` when given), locked in id order. */
  async lockByIds(db: Executor, workspaceId: string, ids: string[], campaignId?: string): Promise<ContactRow[]> {
    const q = db<ContactRow>('contacts').where('workspace_id', workspaceId).whereIn('id', ids);
    if (campaignId) q.andWhere('campaign_id', campaignId);
    return q.orderBy('id').forUpdate();
  }

  /** The workspace's contacts with any of these (lower-case) addresses (in `campaignId` when given), locked in id order. */
  async lockByEmails(db: Executor, workspaceId: string, emails: string[], campaignId?: string): Promise<ContactRow[]> {
    const q = db<ContactRow>('contacts')
      .where('workspace_id', workspaceId)
      .whereRaw(`lower(email) in (${emails.map(() => '?').join(', ')})`, emails);
    if (campaignId) q.andWhere('campaign_id', campaignId);
    return q.orderBy('id').forUpdate();
  }

  /** Sets `status` on those of `ids` whose status is `from`; returns the rows changed. */
  async changeStatus(
    db: Executor,
    workspaceId: string,
    ids: string[],
    from: string,
    status: string,
    at: Date,
  ): Promise<ContactRow[]> {
    if (ids.length === 0) return [];
    return db('contacts')
      .where({ workspace_id: workspaceId, status: from })
      .whereIn('id', ids)
      .update({ status, updated_at: at })
      .returning('*');
  }

  /** Moves the contacts to `campaignId` with the status each should have there; returns them in id order. */
  async moveTo(
    db: Executor,
    workspaceId: string,
    moves: { id: string; status: string }[],
    campaignId: string,
    at: Date,
  ): Promise<ContactRow[]> {
    const byStatus = new Map<string, string[]>();
    for (const m of moves) byStatus.set(m.status, [...(byStatus.get(m.status) ?? []), m.id]);
    const out: ContactRow[] = [];
    for (const [status, ids] of byStatus) {
      out.push(
        ...(await db('contacts')
          .where('workspace_id', workspaceId)
          .whereIn('id', ids)
          .update({ campaign_id: campaignId, status, updated_at: at })
          .returning<ContactRow[]>('*')),
      );
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Completes the active or paused contacts of a campaign whose address is at `domain`. */
  async finishDomain(
    db: Executor,
    workspaceId: string,
    campaignId: string,
    domain: string,
    at: Date,
  ): Promise<string[]> {
    const rows = await db('contacts')
      .where({ workspace_id: workspaceId, campaign_id: campaignId })
      .whereIn('status', UNFINISHED_STATUSES)
      .whereRaw("lower(split_part(email, '@', 2)) = ?", [domain])
      .update({ status: 'completed', updated_at: at })
      .returning('id');
    return rows.map((r: { id: string }) => r.id);
  }

  /**
   * One keyset page of the workspace's contacts. A read across modules: the progress row (sending's table), the
   * campaign's status and the latest reply's intent (the inbox's table) are joined read-only, one probe per row
   * by primary key or index, so the page walks the sort's index and stops at `limit` rows.
   *
   * A search looks first among the next SEARCH_WINDOW contacts in the sort's order: a term that many contacts
   * hold (a company, a mail domain) fills the page there, where the trigram index would fetch and sort every
   * contact that holds it. Only a term that does not fill the page there is looked up by the trigram index,
   * and a rare term's matches are few to sort.
   */
  async listPage(db: Executor, workspaceId: string, filter: ListFilter, page: ListPage): Promise<ListedRow[]> {
    if (filter.search) {
      const windowed = await this.pageQuery(db, workspaceId, filter, page, SEARCH_WINDOW);
      if (windowed.length === page.limit) return windowed;
    }
    return this.pageQuery(db, workspaceId, filter, page);
  }

  /** The page's query, over the workspace's contacts or over the next `window` of them in the sort's order. */
  private pageQuery(
    db: Executor,
    workspaceId: string,
    filter: ListFilter,
    page: ListPage,
    window?: number,
  ): Promise<ListedRow[]> {
    const sortColumn = SORT_COLUMN[page.sort];
    const order = `${sortColumn} ${page.order}, c.id ${page.order}`;
    /** The conditions on the contact's own columns that an index in the sort's order serves. */
    const own = (q: Knex.QueryBuilder) => {
      q.where('c.workspace_id', workspaceId);
      if (filter.campaignId) q.andWhere('c.campaign_id', filter.campaignId);
      if (filter.status) q.andWhere('c.status', filter.status);
      if (filter.leadStatus) q.andWhere('c.lead_status', filter.leadStatus);
      if (filter.createdAfter) q.andWhere('c.created_at', '>=', filter.createdAfter);
      if (filter.createdBefore) q.andWhere('c.created_at', '<', filter.createdBefore);
      const direction = page.order === 'asc' ? '>' : '<';
      if (page.after) q.andWhereRaw(`(${sortColumn}, c.id) ${direction} (?, ?)`, [page.after.key, page.after.id]);
      return q;
    };
    const contacts = window
      ? own(db('contacts as c').select('c.*')).orderByRaw(order).limit(window).as('c')
      : 'contacts as c';
    const q = own(db.from(contacts))
      .join('campaigns as k', 'k.id', 'c.campaign_id')
      .leftJoin('sending_progress as p', 'p.contact_id', 'c.id')
      .joinRaw(`left join lateral (${LAST_INTENT}) ri on true`)
      // A deleted campaign's contacts are gone from every list, as the campaign is.
      .whereNull('k.deleted_at')
      .select(
        'c.*',
        'p.state as progress_state',
        'p.step_number as progress_step',
        'p.due_at as progress_due_at',
        'p.subsequence_id as progress_subsequence_id',
        'k.status as campaign_status',
        'ri.intent as last_intent',
      );
    // On the contact's own row, so the planner filters contacts in the sort's index order before any join.
    if (filter.intent) q.andWhereRaw(`(${LAST_INTENT}) = ?`, [filter.intent]);
    if (filter.step !== undefined) q.andWhere('p.step_number', filter.step).andWhereNot('p.state', 'done');
    if (filter.subsequenceId) q.andWhere('p.subsequence_id', filter.subsequenceId);
    // The workspace's paused campaigns are one small set the planner hashes once, not a look-up per contact.
    const pausedCampaigns = "select pc.id from campaigns pc where pc.workspace_id = ? and pc.status = 'paused'";
    if (filter.paused === true)
      q.andWhereRaw(`(c.status = 'paused' or c.campaign_id in (${pausedCampaigns}))`, [workspaceId]);
    if (filter.paused === false)
      q.andWhereNot('c.status', 'paused').andWhereRaw(`c.campaign_id not in (${pausedCampaigns})`, [workspaceId]);
    if (filter.search) q.andWhereRaw(`${SEARCH_TEXT} like ?`, [`%${likeLiteral(filter.search.toLowerCase())}%`]);
    return q.orderByRaw(order).limit(page.limit);
  }
}
