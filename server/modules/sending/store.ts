/**
 * The engine's own tables (sending_progress, sending_accounts) and its read model of what it sends: due
 * contacts with their campaign, steps, variants and linked accounts. Those reads join other modules' tables
 * in one query because the scheduler runs them every tick over many contacts; every write to another
 * module's table goes through that module's service (messages: the mail module).
 */
import type { Knex } from 'knex';
import type { components } from '../../../generated/api';
import { jsonColumn, type Executor } from '../../db';
import { backlogOf, type Backlog } from '../../observability/telemetry';
import type { ScheduleJson } from '../campaign';
import { UNFINISHED_STATUSES } from '../contact';

export type ProgressState = 'waiting' | 'sending' | 'held' | 'done' | 'unknown';

export interface ProgressRow {
  contact_id: string;
  workspace_id: string;
  campaign_id: string;
  account_id: string | null;
  step_number: number;
  /** The subsequence the contact is in (null: the main sequence); `step_number` counts its steps then. */
  subsequence_id: string | null;
  /** Where the contact left the main sequence, for a delete of its subsequence that moves it back. */
  main_step_number: number | null;
  state: ProgressState;
  due_at: Date;
  reason: string | null;
  attempts: number;
  last_message_id: string | null;
  last_sent_at: Date | null;
  updated_at: Date;
}

export interface SendingCampaign {
  id: string;
  workspace_id: string;
  name: string;
  schedule: ScheduleJson | null;
  daily_limit: number | null;
  daily_new_contacts: number | null;
  email_gap_minutes: number;
  random_wait_max_minutes: number;
  text_only: boolean;
  track_opens: boolean;
  track_clicks: boolean;
  send_in_lead_timezone: boolean;
  workspace_timezone: string;
  /** Most emails a day to one recipient domain: from this campaign, and from the whole workspace (null: no cap). */
  recipient_domain_daily_limit: number | null;
  workspace_recipient_domain_daily_limit: number | null;
  /** Send first emails from an account of the recipient's provider when one has room (strict: only then). */
  match_provider: boolean;
  match_provider_strict: boolean;
  /** The campaign's tracking domain while it is verified, else null (the default host). */
  tracking_host: string | null;
  send_priority: 'dueFirst' | 'newLeads' | 'followUps';
  first_email_text_only: boolean;
  copy_to: { cc: string[]; bcc: string[] };
  stop_on_open: boolean;
  stop_on_click: boolean;
  verified_only: boolean;
}

export interface SendingStep {
  id: string;
  /** The wait after the step before, in minutes. */
  delay_minutes: number;
  /** The step's A/Z winner rule, or null (winner.ts). */
  auto_winner: components['schemas']['AutoWinner'] | null;
  variants: { id: string; label: string; subject: string; body: string; weight: number }[];
}

/** A campaign's subsequences, each with its status and steps in order. */
export type SubsequenceSteps = Map<string, { status: string; steps: SendingStep[] }>;

/** A due contact: its progress and the contact fields templates read. */
export interface DueContact extends ProgressRow {
  email: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  job_title: string | null;
  phone: string | null;
  website: string | null;
  linkedin_url: string | null;
  timezone: string | null;
  custom_variables: Record<string, string | number | boolean | null> | null;
}

export interface SendingAccount {
  id: string;
  email: string;
  daily_limit: number;
  next_send_at: Date;
  sent_today: number;
  /** The account's tracking domain while it is verified, else null. */
  tracking_host: string | null;
  provider: 'google' | 'microsoft' | 'smtp';
}

/** A workspace's sending settings (no row: the defaults). */
export interface SendingSettingsRow {
  workspace_id: string;
  recipient_domain_daily_limit: number | null;
  /** Bounce protection; null: the default (EngineOptions). */
  bounce_rate_percent: number | null;
  bounce_window: number | null;
  /** Null: campaigns never pause for bounces. */
  campaign_bounce_rate_percent: number | null;
  campaign_bounce_window: number | null;
  updated_at: Date;
}

/** The contact's columns a message is rendered from (address, variables, zone), as the claim and the preview read them. */
export const MESSAGE_CONTACT_COLUMNS = [
  'c.email',
  'c.first_name',
  'c.last_name',
  'c.company_name',
  'c.job_title',
  'c.phone',
  'c.website',
  'c.linkedin_url',
  'c.timezone',
  'c.custom_variables',
];

export class SendingStore {
  /**
   * Progress rows (step 1, due now) for those of `contactIds` that are active in an active campaign and have
   * none. Their campaigns are locked (KEY SHARE) before their status is read, so a launch running meanwhile
   * either sees these contacts or is seen here.
   */
  async startContacts(db: Executor, contactIds: string[], now: Date): Promise<void> {
    if (contactIds.length === 0) return;
    const campaigns = db('contacts').whereIn('id', contactIds).distinct('campaign_id');
    const active: string[] = (
      await db('campaigns')
        .whereIn('id', campaigns)
        .andWhere('status', 'active')
        .whereNull('deleted_at')
        .orderBy('id')
        .forKeyShare()
        .select('id')
    ).map((r: { id: string }) => r.id);
    if (active.length)
      await this.start(db, now, 'c.id = ANY(?::uuid[]) AND c.campaign_id = ANY(?::uuid[])', [contactIds, active]);
  }

  /** Progress rows (step 1, due now) for the campaign's active contacts that have none (it is going active, its row locked). */
  async startCampaign(db: Executor, campaignId: string, now: Date): Promise<void> {
    await this.start(
      db,
      now,
      'c.campaign_id = ? AND NOT EXISTS (SELECT 1 FROM sending_progress p WHERE p.contact_id = c.id)',
      [campaignId],
    );
  }

  private async start(db: Executor, now: Date, where: string, bindings: unknown[]): Promise<void> {
    await db.raw(
      `INSERT INTO sending_progress (contact_id, workspace_id, campaign_id, step_number, state, due_at, updated_at)
       SELECT c.id, c.workspace_id, c.campaign_id, 1, 'waiting', ?, ? FROM contacts c WHERE c.status = 'active' AND ${where}
       ON CONFLICT (contact_id) DO NOTHING`,
      [now, now, ...bindings] as readonly Knex.RawBinding[],
    );
  }

  /** Held contacts whose fields changed since they were held get another try now. */
  async releaseHeld(db: Executor, now: Date): Promise<void> {
    await db.raw(
      `UPDATE sending_progress p SET state = 'waiting', reason = NULL, due_at = ?, updated_at = ?
         FROM contacts c WHERE c.id = p.contact_id AND p.state = 'held' AND c.updated_at > p.updated_at
           AND p.reason IS DISTINCT FROM 'subsequence_paused'`,
      [now, now],
    );
  }

  /** Contacts whose claimed message may have gone out without a recorded outcome (its lease ran out). */
  async markUnknown(db: Executor, messages: { id: string; contact_id: string | null }[], now: Date): Promise<void> {
    for (const m of messages) {
      if (m.contact_id)
        await db('sending_progress')
          .where({ contact_id: m.contact_id, state: 'sending' })
          .update({ state: 'unknown', reason: 'unknown_outcome', last_message_id: m.id, updated_at: now });
    }
  }

  /**
   * Contacts whose claim never reached SMTP: due again now. One never mailed is bound to no account again: its
   * claim chose one, but no thread started there, so any account with room may send it (else it would wait for
   * that account's room while another's goes unused).
   */
  async requeue(db: Executor, contactIds: string[], now: Date): Promise<void> {
    if (contactIds.length)
      await db('sending_progress')
        .whereIn('contact_id', contactIds)
        .where({ state: 'sending' })
        .update({
          state: 'waiting',
          due_at: now,
          reason: null,
          account_id: db.raw('CASE WHEN last_message_id IS NULL THEN NULL ELSE account_id END'),
          updated_at: now,
        });
  }

  /** Contacts of active campaigns due for their next message, and the earliest due time (the worker's backlog). */
  async backlog(db: Executor, now: Date): Promise<Backlog> {
    const due = db('sending_progress as p')
      .join('campaigns as k', 'k.id', 'p.campaign_id')
      .where({ 'p.state': 'waiting', 'k.status': 'active' })
      .whereNull('k.deleted_at')
      .andWhere('p.due_at', '<=', now);
    return backlogOf(due, 'p.due_at');
  }

  /**
   * Active campaigns whose earliest waiting row is due by `now`: one descent of the (campaign_id, due_at)
   * index of waiting rows per active campaign, so the cost follows the active campaigns, not the rows
   * waiting in them (written as the earliest row, not EXISTS, so no plan filters a campaign's rows by due
   * time). Those after `after` come first, so campaigns that cannot send now (gaps, limits) do not keep the
   * others out of a run.
   */
  async campaignsWithDueWork(db: Executor, now: Date, limit: number, after: string | null): Promise<string[]> {
    const rows = await db('campaigns as k')
      .where('k.status', 'active')
      .whereNull('k.deleted_at')
      .whereRaw(
        "(SELECT p.due_at FROM sending_progress p WHERE p.campaign_id = k.id AND p.state = 'waiting' ORDER BY p.due_at LIMIT 1) <= ?",
        [now],
      )
      .orderByRaw('(k.id <= ?), k.id', [after ?? '00000000-0000-0000-0000-000000000000'])
      .limit(limit)
      .select('k.id');
    return rows.map((r: { id: string }) => r.id);
  }

  /** The active campaign, locked for this claim; undefined when another worker holds it, or it is not active or deleted. */
  async lockActiveCampaign(db: Executor, campaignId: string): Promise<SendingCampaign | undefined> {
    const row = await db('campaigns as k')
      .join('workspaces as w', 'w.id', 'k.workspace_id')
      .leftJoin('tracking_domains as td', (j) =>
        j.on('td.id', 'k.tracking_domain_id').andOnVal('td.status', 'verified'),
      )
      .leftJoin('sending_settings as ss', 'ss.workspace_id', 'k.workspace_id')
      .where({ 'k.id': campaignId, 'k.status': 'active' })
      .whereNull('k.deleted_at')
      // NO KEY: rows that reference the campaign (events, messages) may still be written meanwhile.
      .forNoKeyUpdate('k')
      .skipLocked()
      .first<SendingCampaign | undefined>(
        'k.id',
        'k.workspace_id',
        'k.name',
        'k.schedule',
        'k.daily_limit',
        'k.daily_new_contacts',
        'k.email_gap_minutes',
        'k.random_wait_max_minutes',
        'k.text_only',
        'k.track_opens',
        'k.track_clicks',
        'k.send_in_lead_timezone',
        'w.timezone as workspace_timezone',
        'td.domain as tracking_host',
        'k.recipient_domain_daily_limit',
        'ss.recipient_domain_daily_limit as workspace_recipient_domain_daily_limit',
        'k.match_provider',
        'k.match_provider_strict',
        'k.send_priority',
        'k.first_email_text_only',
        'k.copy_to',
        'k.stop_on_open',
        'k.stop_on_click',
        'k.verified_only',
      );
    // The campaign module writes the schedule (validated); the driver may hand over the json as text.
    return (
      row && {
        ...row,
        schedule: jsonColumn(row.schedule) as ScheduleJson | null,
        copy_to: jsonColumn(row.copy_to) as SendingCampaign['copy_to'],
      }
    );
  }

  /** Waits for and locks the campaign row (any status): finishing contacts one at a time per campaign. */
  async lockCampaign(db: Executor, campaignId: string): Promise<{ name: string } | undefined> {
    return db('campaigns').where({ id: campaignId }).forNoKeyUpdate().first('name');
  }

  /** The main sequence's steps in order. */
  async steps(db: Executor, campaignId: string): Promise<SendingStep[]> {
    const steps: Omit<SendingStep, 'variants'>[] = await db('campaign_steps')
      .where({ campaign_id: campaignId })
      .whereNull('subsequence_id')
      .orderBy('step_order')
      .select('id', 'delay_minutes', 'auto_winner');
    return this.withVariants(db, steps);
  }

  /** The campaign's subsequences with their steps (read only when a due contact is in one). */
  async subsequenceSteps(db: Executor, campaignId: string): Promise<SubsequenceSteps> {
    const subsequences: { id: string; status: string }[] = await db('subsequences')
      .where({ campaign_id: campaignId })
      .select('id', 'status');
    const steps: { id: string; subsequence_id: string; delay_minutes: number; auto_winner: unknown }[] = await db(
      'campaign_steps',
    )
      .where({ campaign_id: campaignId })
      .whereNotNull('subsequence_id')
      .orderBy([{ column: 'subsequence_id' }, { column: 'step_order' }])
      .select('id', 'subsequence_id', 'delay_minutes', 'auto_winner');
    const withVariants = await this.withVariants(db, steps);
    return new Map(
      subsequences.map((sub) => [
        sub.id,
        { status: sub.status, steps: withVariants.filter((s) => s.subsequence_id === sub.id) },
      ]),
    );
  }

  private async withVariants<S extends { id: string; delay_minutes: number; auto_winner: unknown }>(
    db: Executor,
    steps: S[],
  ): Promise<(S & SendingStep)[]> {
    if (steps.length === 0) return [];
    const variants: ({ step_id: string } & SendingStep['variants'][number])[] = await db('step_variants')
      .whereIn(
        'step_id',
        steps.map((s) => s.id),
      )
      .select('id', 'step_id', 'label', 'subject', 'body', 'weight');
    return steps.map((s) => ({
      ...s,
      auto_winner: jsonColumn(s.auto_winner) as SendingStep['auto_winner'],
      variants: variants.filter((v) => v.step_id === s.id),
    }));
  }

  /** The campaign's linked active accounts with their pace, locked (in id order) for this claim. */
  async lockSendingAccounts(
    db: Executor,
    campaignId: string,
    now: Date,
  ): Promise<Omit<SendingAccount, 'sent_today'>[]> {
    const ids: string[] = (
      await db('campaign_accounts as ca')
        .join('email_accounts as a', 'a.id', 'ca.account_id')
        .where({ 'ca.campaign_id': campaignId, 'a.status': 'active' })
        .select('a.id')
    ).map((r: { id: string }) => r.id);
    if (ids.length === 0) return [];
    await db('sending_accounts')
      .insert(ids.map((id) => ({ account_id: id, next_send_at: now, failures: 0 })))
      .onConflict('account_id')
      .ignore();
    return db('sending_accounts as s')
      .join('email_accounts as a', 'a.id', 's.account_id')
      .leftJoin('tracking_domains as td', (j) =>
        j.on('td.id', 'a.tracking_domain_id').andOnVal('td.status', 'verified'),
      )
      .whereIn('s.account_id', ids)
      .orderBy('s.account_id')
      .forUpdate('s')
      .select('a.id', 'a.email', 'a.provider', 'a.daily_limit', 's.next_send_at', 'td.domain as tracking_host');
  }

  /** Due contacts, the longest due first, or first emails (`newLeads`) or follow-ups (`followUps`) before the others. */
  async dueContacts(
    db: Executor,
    campaignId: string,
    now: Date,
    limit: number,
    priority: SendingCampaign['send_priority'] = 'dueFirst',
  ): Promise<DueContact[]> {
    const query = db('sending_progress as p')
      .join('contacts as c', 'c.id', 'p.contact_id')
      .where({ 'p.campaign_id': campaignId, 'p.state': 'waiting', 'c.status': 'active' })
      .andWhere('p.due_at', '<=', now);
    if (priority !== 'dueFirst') query.orderByRaw(priority === 'newLeads' ? 'p.step_number > 1' : 'p.step_number = 1');
    return query
      .orderBy([{ column: 'p.due_at' }, { column: 'p.contact_id' }])
      .limit(limit)
      .forUpdate('p')
      .skipLocked()
      .select('p.*', ...MESSAGE_CONTACT_COLUMNS);
  }

  /**
   * The addresses whose provider a claim of this campaign may match: its due contacts' (as many as a claim
   * takes) and its linked SMTP accounts'; none when the campaign does not match providers.
   */
  async addressesToMatch(db: Executor, campaignId: string, now: Date, limit: number): Promise<string[]> {
    const matching = await db('campaigns')
      .where({ id: campaignId, match_provider: true })
      .first<{ id: string } | undefined>('id');
    if (!matching) return [];
    const contacts: { email: string }[] = await db('sending_progress as p')
      .join('contacts as c', 'c.id', 'p.contact_id')
      .where({ 'p.campaign_id': campaignId, 'p.state': 'waiting' })
      .andWhere('p.due_at', '<=', now)
      .orderBy([{ column: 'p.due_at' }, { column: 'p.contact_id' }])
      .limit(limit)
      .select('c.email');
    const accounts: { email: string }[] = await db('campaign_accounts as ca')
      .join('email_accounts as a', 'a.id', 'ca.account_id')
      .where({ 'ca.campaign_id': campaignId, 'a.provider': 'smtp' })
      .select('a.email');
    return [...contacts, ...accounts].map((r) => r.email);
  }

  /** Serializes claims of one workspace's campaigns while they count its mail per recipient domain. */
  async lockRecipientDomains(db: Executor, workspaceId: string): Promise<void> {
    await db.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`recipient_domains:${workspaceId}`]);
  }

  async updateProgress(db: Executor, contactId: string, patch: Partial<ProgressRow>): Promise<void> {
    await db('sending_progress').where({ contact_id: contactId }).update(patch);
  }

  /** Updates the contact's progress only while it is still in `subsequenceId` (null: the main sequence). */
  async updateProgressIn(
    db: Executor,
    contactId: string,
    subsequenceId: string | null,
    patch: Partial<ProgressRow>,
  ): Promise<boolean> {
    const n = await db('sending_progress')
      .where({ contact_id: contactId })
      .whereRaw('subsequence_id IS NOT DISTINCT FROM ?::uuid', [subsequenceId])
      .update(patch);
    return n > 0;
  }

  // --- subsequences ---

  /** Puts the contact at step 1 of the subsequence (a new row when it has none), keeping its thread and account. */
  async enterSubsequence(
    db: Executor,
    p: { contactId: string; workspaceId: string; campaignId: string; subsequenceId: string; dueAt: Date; now: Date },
  ): Promise<{ fromSubsequenceId: string | null }> {
    const [row] = await this.lockProgress(db, [p.contactId]);
    const patch = {
      campaign_id: p.campaignId,
      subsequence_id: p.subsequenceId,
      step_number: 1,
      state: 'waiting' as const,
      due_at: p.dueAt,
      reason: null,
      attempts: 0,
      updated_at: p.now,
    };
    if (!row) {
      await db('sending_progress').insert({
        contact_id: p.contactId,
        workspace_id: p.workspaceId,
        main_step_number: 1,
        ...patch,
      });
      return { fromSubsequenceId: null };
    }
    await this.updateProgress(db, p.contactId, {
      ...patch,
      main_step_number: row.subsequence_id === null ? row.step_number : row.main_step_number,
    });
    return { fromSubsequenceId: row.subsequence_id };
  }

  async contactsInSubsequences(db: Executor, subsequenceIds: string[]): Promise<Map<string, number>> {
    if (subsequenceIds.length === 0) return new Map();
    const rows: { subsequence_id: string; n: number }[] = await db('sending_progress as p')
      .join('contacts as c', 'c.id', 'p.contact_id')
      .whereIn('p.subsequence_id', subsequenceIds)
      .whereNot('p.state', 'done')
      .whereIn('c.status', UNFINISHED_STATUSES)
      .groupBy('p.subsequence_id')
      .select('p.subsequence_id', db.raw('count(*)::int AS n'));
    return new Map(rows.map((r) => [r.subsequence_id, r.n]));
  }

  /** The unfinished progress rows in a subsequence, locked. */
  async lockInSubsequence(db: Executor, subsequenceId: string): Promise<ProgressRow[]> {
    return db('sending_progress')
      .where({ subsequence_id: subsequenceId })
      .whereNot('state', 'done')
      .orderBy('contact_id')
      .forUpdate();
  }

  async releaseSubsequence(db: Executor, subsequenceId: string, now: Date): Promise<void> {
    await db('sending_progress')
      .where({ subsequence_id: subsequenceId, state: 'held', reason: 'subsequence_paused' })
      .update({ state: 'waiting', reason: null, due_at: now, updated_at: now });
  }

  async setAccountPace(db: Executor, accountId: string, patch: { next_send_at: Date }): Promise<void> {
    await db('sending_accounts').where({ account_id: accountId }).update(patch);
  }

  // --- sending status ---

  async progressCounts(
    db: Executor,
    campaignId: string,
    now: Date,
  ): Promise<{ state: ProgressState; due: boolean; n: number }[]> {
    return db('sending_progress as p')
      .join('contacts as c', 'c.id', 'p.contact_id')
      .where('p.campaign_id', campaignId)
      .whereIn('c.status', UNFINISHED_STATUSES)
      .groupBy('p.state', db.raw('2'))
      .select('p.state', db.raw('(p.due_at <= ?) AS due', [now]), db.raw('count(*)::int AS n'));
  }

  async contactCounts(db: Executor, campaignId: string): Promise<{ status: string; started: boolean; n: number }[]> {
    return db('contacts as c')
      .leftJoin('sending_progress as p', 'p.contact_id', 'c.id')
      .where('c.campaign_id', campaignId)
      .groupBy('c.status', db.raw('2'))
      .select('c.status', db.raw('(p.contact_id IS NOT NULL) AS started'), db.raw('count(*)::int AS n'));
  }

  async nextDue(db: Executor, campaignId: string): Promise<Date | null> {
    const row = await db('sending_progress')
      .where({ campaign_id: campaignId, state: 'waiting' })
      .min('due_at as at')
      .first<{ at: Date | string | null } | undefined>();
    return row?.at ? new Date(row.at) : null;
  }

  /** Whether some contact of the campaign waits for this reason. */
  async waitingFor(db: Executor, campaignId: string, reason: string): Promise<boolean> {
    const row = await db('sending_progress')
      .where({ campaign_id: campaignId, state: 'waiting', reason })
      .first<{ found: number } | undefined>(db.raw('1 AS found'));
    return row !== undefined;
  }

  async heldReasons(db: Executor, campaignId: string): Promise<string[]> {
    const rows = await db('sending_progress')
      .where({ campaign_id: campaignId, state: 'held' })
      .distinct('reason')
      .limit(20);
    return rows.map((r: { reason: string }) => r.reason);
  }

  /** Whether some waiting contact of the campaign waits for this reason. */
  async waitsFor(db: Executor, campaignId: string, reason: string): Promise<boolean> {
    return (
      (await db('sending_progress')
        .where({ campaign_id: campaignId, state: 'waiting', reason })
        .first('contact_id')) !== undefined
    );
  }

  // --- the workspace's sending settings ---

  async settings(db: Executor, workspaceId: string): Promise<SendingSettingsRow | undefined> {
    return db('sending_settings').where({ workspace_id: workspaceId }).first<SendingSettingsRow | undefined>();
  }

  async saveSettings(db: Executor, row: SendingSettingsRow): Promise<void> {
    await db('sending_settings').insert(row).onConflict('workspace_id').merge();
  }

  async progressOf(db: Executor, contactId: string): Promise<ProgressRow | undefined> {
    return db('sending_progress').where({ contact_id: contactId }).first<ProgressRow | undefined>();
  }

  /** The progress rows of these contacts, locked. */
  async lockProgress(db: Executor, contactIds: string[]): Promise<ProgressRow[]> {
    if (contactIds.length === 0) return [];
    return db('sending_progress').whereIn('contact_id', contactIds).orderBy('contact_id').forUpdate();
  }

  async deleteProgress(db: Executor, contactIds: string[]): Promise<void> {
    if (contactIds.length) await db('sending_progress').whereIn('contact_id', contactIds).delete();
  }
}
