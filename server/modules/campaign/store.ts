import type { components } from '../../../generated/api';
/** Plain rows for campaigns, their steps, variants and linked accounts. Every query is scoped by workspace. */
import { columnsOf, pageTotal, prepared, selectList, TOTAL_COLUMN, type Executor } from '../../db';

export interface ScheduleJson {
  timezone: string;
  days: number[];
  from: string;
  to: string;
  startDate: string | null;
  endDate: string | null;
}

export interface CampaignRow {
  id: string;
  workspace_id: string;
  name: string;
  /** Stored status: draft | active | paused (never completed, see effective_status). */
  status: string;
  schedule: ScheduleJson | null;
  daily_limit: number | null;
  stop_on_reply: boolean;
  stop_for_company: boolean;
  stop_on_auto_reply: boolean;
  intent_sets_lead_status: boolean;
  email_gap_minutes: number;
  random_wait_max_minutes: number;
  daily_new_contacts: number | null;
  track_opens: boolean;
  track_clicks: boolean;
  text_only: boolean;
  send_in_lead_timezone: boolean;
  /** The campaign's chosen tracking domain (links use it while it is verified). */
  tracking_domain_id: string | null;
  /** At most this many emails a day to one recipient domain from this campaign (null: no cap). */
  recipient_domain_daily_limit: number | null;
  match_provider: boolean;
  match_provider_strict: boolean;
  send_priority: components['schemas']['CampaignOptions']['sendPriority'];
  first_email_text_only: boolean;
  /** Addresses copied on every email (json). */
  copy_to: { cc: string[]; bcc: string[] };
  stop_on_open: boolean;
  stop_on_click: boolean;
  verified_only: boolean;
  /** Why it is paused (CampaignPauseReason code and words); null while it is not. */
  pause_reason_code: string | null;
  pause_reason_message: string | null;
  launched_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A campaign as read: the stored row plus what is derived from other tables. */
/** What a change may write of a campaign's row. */
export type CampaignChanges = Partial<Omit<CampaignRow, 'id' | 'workspace_id'>>;

export interface CampaignView extends CampaignRow {
  effective_status: 'draft' | 'active' | 'paused' | 'completed';
  step_count: number;
  account_count: number;
  contact_count: number;
}

export interface StepRow {
  id: string;
  workspace_id: string;
  campaign_id: string;
  step_order: number;
  delay_minutes: number;
  /** The unit the wait was written in; the engine reads only delay_minutes. */
  delay_unit: components['schemas']['StepDelay']['unit'];
  /** The A/Z test's rule (json; the engine decides the winner, sending/winner.ts), or null. */
  auto_winner: components['schemas']['AutoWinner'] | null;
  created_at: Date;
}

export interface VariantRow {
  id: string;
  workspace_id: string;
  campaign_id: string;
  step_id: string;
  label: string;
  subject: string;
  body: string;
  weight: number;
  created_at: Date;
}

/**
 * What a campaign's status needs to know of its contacts': which statuses are still to be mailed. The contact
 * module owns them (contact/statuses.ts) and the composition root hands them over, so campaign needs no
 * import of contact, which calls campaign.
 */
export interface ContactStatusPort {
  unfinished: readonly string[];
}

/**
 * The status a campaign reads as, in SQL over `campaigns as c`, from two SQL booleans: whether it has contacts
 * and whether any of them is unfinished. `completed` is derived, never stored, so contacts changing status
 * (another module) need no hook here. Both read the contact module's counters (contact_counts, kept by
 * triggers on contacts) inside the campaign's own query: the one read of another module's table that must
 * stay in one statement (README, "Layout").
 */
const effectiveStatus = (hasContacts: string, hasUnfinished: string) =>
  `CASE WHEN c.status = 'active' AND ${hasContacts} AND NOT ${hasUnfinished} THEN 'completed' ELSE c.status END`;

const CAMPAIGN_COLUMNS = columnsOf<CampaignRow>({
  id: true,
  workspace_id: true,
  name: true,
  status: true,
  schedule: true,
  daily_limit: true,
  stop_on_reply: true,
  stop_for_company: true,
  stop_on_auto_reply: true,
  intent_sets_lead_status: true,
  email_gap_minutes: true,
  random_wait_max_minutes: true,
  daily_new_contacts: true,
  track_opens: true,
  track_clicks: true,
  text_only: true,
  send_in_lead_timezone: true,
  tracking_domain_id: true,
  recipient_domain_daily_limit: true,
  match_provider: true,
  match_provider_strict: true,
  send_priority: true,
  first_email_text_only: true,
  copy_to: true,
  stop_on_open: true,
  stop_on_click: true,
  verified_only: true,
  pause_reason_code: true,
  pause_reason_message: true,
  launched_at: true,
  created_at: true,
  updated_at: true,
});

/** What `views` selects: a campaign's columns and its derived counts. */
const VIEW_SELECT = [
  selectList(CAMPAIGN_COLUMNS, 'c'),
  `${effectiveStatus('k.has_contacts', 'k.has_unfinished')} AS effective_status`,
  '(SELECT count(*)::int FROM campaign_steps s WHERE s.campaign_id = c.id AND s.subsequence_id IS NULL) AS step_count',
  '(SELECT count(*)::int FROM campaign_accounts ca WHERE ca.campaign_id = c.id) AS account_count',
  'k.contact_count',
].join(', ');

const NEWEST_FIRST = [
  { column: 'c.created_at', order: 'desc' },
  { column: 'c.id', order: 'desc' },
] as const;

/** A campaign's changes as written: the schedule is stored as JSON. */
function storedValues(changes: Partial<CampaignRow>): Record<string, unknown> {
  const values: Record<string, unknown> = { ...changes };
  if (changes.schedule !== undefined)
    values.schedule = changes.schedule === null ? null : JSON.stringify(changes.schedule);
  return values;
}

export class CampaignStore {
  /** The effective status with its own look-ups of the counters, for filters and counts over many campaigns. */
  private readonly effectiveStatusSql: string;
  /** A campaign's counters in one look-up (the lateral `k` of a view): its contacts, and the two facts of its status. */
  private readonly countersSql: string;

  constructor(contacts: ContactStatusPort) {
    const unfinished = contacts.unfinished.map((s) => `'${s}'`).join(', ');
    this.effectiveStatusSql = effectiveStatus(
      'EXISTS (SELECT 1 FROM contact_counts cc WHERE cc.campaign_id = c.id AND cc.n > 0)',
      `EXISTS (SELECT 1 FROM contact_counts cc WHERE cc.campaign_id = c.id AND cc.n > 0 AND cc.status IN (${unfinished}))`,
    );
    this.countersSql = `LATERAL (SELECT coalesce(sum(cc.n), 0)::int AS contact_count,
    coalesce(bool_or(cc.n > 0), false) AS has_contacts,
    coalesce(bool_or(cc.n > 0 AND cc.status IN (${unfinished})), false) AS has_unfinished
  FROM contact_counts cc WHERE cc.campaign_id = c.id) k`;
  }

  /** The workspace's campaigns as read (`campaigns as c`, deleted ones left out), each with one look-up per derived count. */
  private views(db: Executor, workspaceId: string) {
    return db('campaigns as c')
      .where('c.workspace_id', workspaceId)
      .whereNull('c.deleted_at')
      .crossJoin(db.raw(this.countersSql))
      .select<CampaignView[]>(db.raw(VIEW_SELECT));
  }

  async exists(db: Executor, workspaceId: string, id: string): Promise<boolean> {
    return Boolean(await db('campaigns').where({ id, workspace_id: workspaceId }).whereNull('deleted_at').first('id'));
  }

  /** One campaign of the workspace; `forUpdate` locks its row until the transaction ends. */
  async find(
    db: Executor,
    workspaceId: string,
    id: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<CampaignView | undefined> {
    const query = this.views(db, workspaceId).where('c.id', id).first();
    if (options.forUpdate) query.forUpdate('c');
    return query;
  }

  /**
   * A page of the workspace's campaigns and their total in one statement: the page is chosen (and counted)
   * from the campaign rows alone, and only its campaigns are looked up for their counts.
   */
  async list(
    db: Executor,
    workspaceId: string,
    page: { limit: number; skip: number; status?: string },
  ): Promise<{ rows: CampaignView[]; total: number }> {
    const filtered = () => {
      const q = db('campaigns as c').where('c.workspace_id', workspaceId).whereNull('c.deleted_at');
      if (page.status) q.whereRaw(`(${this.effectiveStatusSql}) = ?`, [page.status]);
      return q;
    };
    const pageIds = filtered()
      .select('c.id', db.raw(TOTAL_COLUMN))
      .orderBy([...NEWEST_FIRST])
      .limit(page.limit)
      .offset(page.skip)
      .as('p');
    const rows = await prepared<CampaignView & { total: string }>(
      db,
      this.views(db, workspaceId)
        .join(pageIds, 'p.id', 'c.id')
        .select('p.total')
        .orderBy([...NEWEST_FIRST]),
    );
    const total = await pageTotal(rows, page.skip, async () => {
      const [{ count }] = await filtered().count<{ count: string | number }[]>({ count: '*' });
      return Number(count);
    });
    return { rows, total };
  }

  async insert(db: Executor, row: CampaignRow): Promise<void> {
    await db('campaigns').insert({ ...row, schedule: row.schedule === null ? null : JSON.stringify(row.schedule) });
  }

  async update(db: Executor, workspaceId: string, id: string, changes: CampaignChanges): Promise<void> {
    await db('campaigns')
      .where({ workspace_id: workspaceId, id })
      .whereNull('deleted_at')
      .update(storedValues(changes));
  }

  /** Marks the campaign deleted; its name, or undefined when the workspace has no such campaign left. */
  async markDeleted(db: Executor, workspaceId: string, id: string, at: Date): Promise<{ name: string } | undefined> {
    const [row] = await db('campaigns')
      .where({ workspace_id: workspaceId, id })
      .whereNull('deleted_at')
      .update({ deleted_at: at, updated_at: at })
      .returning<{ name: string }[]>('name');
    return row;
  }

  /**
   * Writes the changes and reads the campaign as changed, in one statement: the updated row (a CTE named
   * like the views' table alias) with the view's derived counts; undefined when the workspace has no such campaign.
   */
  async updateView(db: Executor, workspaceId: string, id: string, changes: CampaignChanges): Promise<CampaignView> {
    const update = db('campaigns')
      .where({ workspace_id: workspaceId, id })
      .whereNull('deleted_at')
      .update(storedValues(changes), '*')
      .toSQL();
    const { rows } = await db.raw<{ rows: CampaignView[] }>(
      `WITH c AS (${update.sql}) SELECT ${VIEW_SELECT} FROM c CROSS JOIN ${this.countersSql}`,
      update.bindings,
    );
    return rows[0];
  }

  // Linked accounts -------------------------------------------------------------------------------

  async linkedAccountIds(db: Executor, campaignId: string): Promise<string[]> {
    const rows = await db('campaign_accounts')
      .where('campaign_id', campaignId)
      .orderBy([{ column: 'created_at' }, { column: 'account_id' }])
      .select('account_id');
    return rows.map((r: { account_id: string }) => r.account_id);
  }

  /** The campaign's links in link order: a page of them, or all. */
  async links(
    db: Executor,
    campaignId: string,
    page?: { limit: number; skip: number },
  ): Promise<{ account_id: string; created_at: Date }[]> {
    const q = db('campaign_accounts')
      .where('campaign_id', campaignId)
      .orderBy([{ column: 'created_at' }, { column: 'account_id' }])
      .select('account_id', 'created_at');
    if (page) q.limit(page.limit).offset(page.skip);
    return q;
  }

  /** The campaigns linked to an account, locked so no launch or link runs while it is removed. */
  async lockLinkedTo(db: Executor, workspaceId: string, accountId: string): Promise<{ id: string; name: string }[]> {
    return db('campaigns as c')
      .join('campaign_accounts as ca', 'ca.campaign_id', 'c.id')
      .where({ 'c.workspace_id': workspaceId, 'ca.account_id': accountId })
      .whereNull('c.deleted_at')
      .orderBy('c.id')
      .forUpdate('c')
      .select('c.id', 'c.name');
  }

  /** Of `campaignIds`, the stored-active ones that have no linked account left. */
  async activeWithoutAccounts(db: Executor, campaignIds: string[]): Promise<string[]> {
    if (campaignIds.length === 0) return [];
    const rows = await db('campaigns as c')
      .whereIn('c.id', campaignIds)
      .andWhere('c.status', 'active')
      .whereNotExists(db('campaign_accounts as ca').whereRaw('ca.campaign_id = c.id').select(db.raw('1')))
      .select('c.id');
    return rows.map((r: { id: string }) => r.id);
  }

  /** Of `campaignIds`, the active ones none of whose linked accounts is active. */
  async activeWithoutSenders(db: Executor, campaignIds: string[]): Promise<string[]> {
    if (campaignIds.length === 0) return [];
    const rows = await db('campaigns as c')
      .whereIn('c.id', campaignIds)
      .andWhere('c.status', 'active')
      .whereNotExists(
        db('campaign_accounts as ca')
          .join('email_accounts as a', 'a.id', 'ca.account_id')
          .whereRaw('ca.campaign_id = c.id')
          .andWhere('a.status', 'active')
          .select(db.raw('1')),
      )
      .select('c.id');
    return rows.map((r: { id: string }) => r.id);
  }

  async pause(db: Executor, campaignIds: string[], at: Date): Promise<void> {
    if (campaignIds.length)
      await db('campaigns').whereIn('id', campaignIds).update({
        status: 'paused',
        pause_reason_code: 'no_sender',
        pause_reason_message: 'No linked email account can send: the last one was removed or stopped for good.',
        updated_at: at,
      });
  }

  /** Pauses the campaign if it is active, with its reason; its name when it was paused, else null. */
  async pauseIfActive(
    db: Executor,
    id: string,
    reason: { code: string; message: string },
    at: Date,
  ): Promise<string | null> {
    const [row] = await db('campaigns')
      .where({ id, status: 'active' })
      .update({
        status: 'paused',
        pause_reason_code: reason.code,
        pause_reason_message: reason.message,
        updated_at: at,
      })
      .returning<{ name: string }[]>('name');
    return row?.name ?? null;
  }

  /** Campaigns per status as they read (`completed` derived). */
  async countByStatus(db: Executor, workspaceId: string, campaignId?: string): Promise<Record<string, number>> {
    const q = db('campaigns as c').where('c.workspace_id', workspaceId).whereNull('c.deleted_at');
    if (campaignId) q.andWhere('c.id', campaignId);
    const rows: { status: string; n: number }[] = await q
      .groupByRaw('1')
      .select(db.raw(`${this.effectiveStatusSql} AS status`), db.raw('count(*)::int AS n'));
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  /** The campaign's steps and variants in sequence order. */
  async stepsAndVariants(
    db: Executor,
    campaignId: string,
  ): Promise<{ step_id: string; step_order: number; variant_id: string | null; label: string | null }[]> {
    return db('campaign_steps as s')
      .leftJoin('step_variants as v', 'v.step_id', 's.id')
      .where('s.campaign_id', campaignId)
      .whereNull('s.subsequence_id')
      .orderBy([{ column: 's.step_order' }, { column: 'v.label' }])
      .select('s.id as step_id', 's.step_order', 'v.id as variant_id', 'v.label');
  }

  async link(db: Executor, workspaceId: string, campaignId: string, accountIds: string[], at: Date): Promise<void> {
    if (accountIds.length === 0) return;
    await db('campaign_accounts')
      .insert(
        accountIds.map((account_id) => ({
          campaign_id: campaignId,
          account_id,
          workspace_id: workspaceId,
          created_at: at,
        })),
      )
      .onConflict(['campaign_id', 'account_id'])
      .ignore();
  }

  async unlink(db: Executor, campaignId: string, accountIds: string[]): Promise<void> {
    if (accountIds.length === 0) return;
    await db('campaign_accounts').where('campaign_id', campaignId).whereIn('account_id', accountIds).delete();
  }

  // Steps and variants (of the main sequence; a subsequence's are subsequence-store.ts's) -------------

  async steps(db: Executor, campaignId: string): Promise<StepRow[]> {
    return db('campaign_steps').where('campaign_id', campaignId).whereNull('subsequence_id').orderBy('step_order');
  }

  async findStep(db: Executor, workspaceId: string, stepId: string): Promise<StepRow | undefined> {
    return db('campaign_steps')
      .where({ workspace_id: workspaceId, id: stepId })
      .whereNull('subsequence_id')
      .first<StepRow | undefined>();
  }

  async findVariant(db: Executor, workspaceId: string, variantId: string): Promise<VariantRow | undefined> {
    return db('step_variants').where({ workspace_id: workspaceId, id: variantId }).first<VariantRow | undefined>();
  }

  /** The variants of the given steps, by label. */
  async variants(db: Executor, stepIds: string[]): Promise<VariantRow[]> {
    if (stepIds.length === 0) return [];
    return db('step_variants')
      .whereIn('step_id', stepIds)
      .orderBy([{ column: 'step_id' }, { column: 'label' }]);
  }

  async insertSteps(db: Executor, rows: StepRow[]): Promise<void> {
    if (rows.length) await db('campaign_steps').insert(rows);
  }

  async updateStep(
    db: Executor,
    stepId: string,
    changes: Partial<Pick<StepRow, 'step_order' | 'delay_minutes' | 'delay_unit' | 'auto_winner'>>,
  ): Promise<void> {
    await db('campaign_steps').where('id', stepId).update(changes);
  }

  async deleteStep(db: Executor, stepId: string): Promise<void> {
    await db('campaign_steps').where('id', stepId).delete();
  }

  async insertVariants(db: Executor, rows: VariantRow[]): Promise<void> {
    if (rows.length) await db('step_variants').insert(rows);
  }

  async updateVariant(
    db: Executor,
    variantId: string,
    changes: Partial<Pick<VariantRow, 'label' | 'subject' | 'body' | 'weight'>>,
  ): Promise<void> {
    await db('step_variants').where('id', variantId).update(changes);
  }

  async deleteVariant(db: Executor, variantId: string): Promise<void> {
    await db('step_variants').where('id', variantId).delete();
  }
}
