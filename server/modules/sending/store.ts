/**
 * The engine's own tables (sending_progress, sending_accounts, the outbound side of email_messages)
 * and its read model of what it sends: due contacts with their campaign, steps, variants and linked
 * accounts. Those reads join other modules' tables in one query because the scheduler runs them every
 * tick over many contacts; every write to another module's table goes through that module's service.
 */
import type { Executor } from '../../db';
import type { ScheduleJson } from '../campaign/service';
import type { ContactRow } from '../contact/service';

export type ProgressState = 'waiting' | 'sending' | 'held' | 'done' | 'unknown';

export interface ProgressRow {
  contact_id: string;
  workspace_id: string;
  campaign_id: string;
  account_id: string | null;
  step_number: number;
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
  workspace_timezone: string;
}

export interface SendingStep {
  id: string;
  delay_days: number;
  variants: { id: string; label: string; subject: string; body: string; weight: number }[];
}

/** A due contact: its progress and the contact fields templates read. */
export interface DueContact
  extends ProgressRow,
    Pick<ContactRow, 'email' | 'first_name' | 'last_name' | 'company_name' | 'job_title' | 'phone' | 'website' | 'linkedin_url' | 'custom_variables'> {}

export interface SendingAccount {
  id: string;
  email: string;
  daily_limit: number;
  next_send_at: Date;
  sent_today: number;
}

export interface OutboundMessage {
  id: string;
  workspace_id: string;
  account_id: string;
  campaign_id: string;
  contact_id: string;
  step_id: string;
  variant_id: string;
  step_number: number;
  direction: 'outbound';
  kind: 'campaign';
  message_id: string;
  in_reply_to: string | null;
  references: string[];
  thread_id: string;
  from_address: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  status: 'sending';
  created_at: Date;
}

export class SendingStore {
  /** Progress rows for contacts of active campaigns that have none yet (due now). */
  async seedProgress(db: Executor, now: Date, limit: number): Promise<number> {
    const result = await db.raw(
      `INSERT INTO sending_progress (contact_id, workspace_id, campaign_id, step_number, state, due_at, updated_at)
       SELECT c.id, c.workspace_id, c.campaign_id, 1, 'waiting', ?, ?
         FROM contacts c JOIN campaigns k ON k.id = c.campaign_id AND k.status = 'active'
        WHERE c.status = 'active' AND NOT EXISTS (SELECT 1 FROM sending_progress p WHERE p.contact_id = c.id)
        LIMIT ?
       ON CONFLICT (contact_id) DO NOTHING`,
      [now, now, limit],
    );
    return result.rowCount ?? 0;
  }

  /** Held contacts whose fields changed since they were held get another try now. */
  async releaseHeld(db: Executor, now: Date): Promise<void> {
    await db.raw(
      `UPDATE sending_progress p SET state = 'waiting', reason = NULL, due_at = ?, updated_at = ?
         FROM contacts c WHERE c.id = p.contact_id AND p.state = 'held' AND c.updated_at > p.updated_at`,
      [now, now],
    );
  }

  /**
   * Claims a worker lost: one handed to SMTP before `handedBefore` without an outcome may have gone out, so
   * it is `unknown` (never sent again by itself); one never handed over and claimed before `claimedBefore`
   * did not, so its contact goes back to the queue.
   */
  async expireClaims(db: Executor, handedBefore: Date, claimedBefore: Date, now: Date): Promise<void> {
    const lost: { id: string; contact_id: string }[] = await db('email_messages')
      .where({ status: 'sending' })
      .whereNotNull('handed_at')
      .andWhere('handed_at', '<', handedBefore)
      .update({ status: 'unknown', smtp_response: 'The worker stopped before the SMTP outcome was recorded.' })
      .returning(['id', 'contact_id']);
    for (const row of lost) {
      await db('sending_progress').where({ contact_id: row.contact_id, state: 'sending' }).update({ state: 'unknown', reason: 'unknown_outcome', last_message_id: row.id, updated_at: now });
    }
    const unhanded: { id: string }[] = await db('email_messages').where({ status: 'sending' }).whereNull('handed_at').andWhere('created_at', '<', claimedBefore).select('id');
    await this.releaseClaims(db, unhanded.map((r) => r.id), now);
  }

  /** Claims that never reached SMTP: the message is forgotten and its contact is due again now. */
  async releaseClaims(db: Executor, ids: string[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    const released: { contact_id: string }[] = await db('email_messages').whereIn('id', ids).where({ status: 'sending' }).whereNull('handed_at').delete().returning('contact_id');
    if (released.length === 0) return;
    await db('sending_progress')
      .whereIn('contact_id', released.map((r) => r.contact_id))
      .where({ state: 'sending' })
      .update({ state: 'waiting', due_at: now, reason: null, updated_at: now });
  }

  /**
   * Commits that this claim goes to SMTP now; false when it was released meanwhile (then another claim
   * sends it). The conditional update is what keeps a released claim from going out twice.
   */
  async handOver(db: Executor, id: string, now: Date): Promise<boolean> {
    return (await db('email_messages').where({ id, status: 'sending' }).whereNull('handed_at').update({ handed_at: now })) > 0;
  }

  async campaignsWithDueWork(db: Executor, now: Date, limit: number): Promise<string[]> {
    const rows = await db('sending_progress')
      .where('state', 'waiting')
      .andWhere('due_at', '<=', now)
      .distinct('campaign_id')
      .limit(limit);
    return rows.map((r: { campaign_id: string }) => r.campaign_id);
  }

  /** The active campaign, locked for this claim; undefined when another worker holds it or it is not active. */
  async lockActiveCampaign(db: Executor, campaignId: string): Promise<SendingCampaign | undefined> {
    const row = await db('campaigns as k')
      .join('workspaces as w', 'w.id', 'k.workspace_id')
      .where({ 'k.id': campaignId, 'k.status': 'active' })
      // NO KEY: rows that reference the campaign (events, messages) may still be written meanwhile.
      .forNoKeyUpdate('k')
      .skipLocked()
      .first(
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
        'w.timezone as workspace_timezone',
      );
    if (row && typeof row.schedule === 'string') row.schedule = JSON.parse(row.schedule);
    return row;
  }

  /** Waits for and locks the campaign row (any status): finishing contacts one at a time per campaign. */
  async lockCampaign(db: Executor, campaignId: string): Promise<{ name: string } | undefined> {
    return db('campaigns').where({ id: campaignId }).forNoKeyUpdate().first('name');
  }

  async steps(db: Executor, campaignId: string): Promise<SendingStep[]> {
    const steps: { id: string; delay_days: number }[] = await db('campaign_steps').where({ campaign_id: campaignId }).orderBy('step_order').select('id', 'delay_days');
    const variants: ({ step_id: string } & SendingStep['variants'][number])[] = await db('step_variants')
      .where({ campaign_id: campaignId })
      .select('id', 'step_id', 'label', 'subject', 'body', 'weight');
    return steps.map((s) => ({ ...s, variants: variants.filter((v) => v.step_id === s.id) }));
  }

  /** Waiting rows of one campaign due by `now`, after the schedule moved them. */
  async postpone(db: Executor, campaignId: string, until: Date): Promise<void> {
    await db('sending_progress').where({ campaign_id: campaignId, state: 'waiting' }).andWhere('due_at', '<', until).update({ due_at: until });
  }

  /** Outbound campaign messages since `since`: all, and first emails only. */
  async campaignSentSince(db: Executor, campaignId: string, since: Date): Promise<{ all: number; first: number }> {
    const row = await db('email_messages')
      .where({ campaign_id: campaignId, direction: 'outbound' })
      .andWhere('created_at', '>=', since)
      .whereIn('status', ['sending', 'sent', 'unknown', 'bounced'])
      .first(db.raw('count(*)::int AS all'), db.raw('count(*) FILTER (WHERE step_number = 1)::int AS first'));
    return { all: row?.all ?? 0, first: row?.first ?? 0 };
  }

  /** The campaign's linked active accounts with their pace, locked (in id order) for this claim. */
  async lockSendingAccounts(db: Executor, campaignId: string, now: Date, dayStart: Date): Promise<SendingAccount[]> {
    const ids: string[] = (
      await db('campaign_accounts as ca').join('email_accounts as a', 'a.id', 'ca.account_id').where({ 'ca.campaign_id': campaignId, 'a.status': 'active' }).select('a.id')
    ).map((r: { id: string }) => r.id);
    if (ids.length === 0) return [];
    await db('sending_accounts')
      .insert(ids.map((id) => ({ account_id: id, next_send_at: now, failures: 0 })))
      .onConflict('account_id')
      .ignore();
    const rows = await db('sending_accounts as s')
      .join('email_accounts as a', 'a.id', 's.account_id')
      .whereIn('s.account_id', ids)
      .orderBy('s.account_id')
      .forUpdate('s')
      .select(
        'a.id',
        'a.email',
        'a.daily_limit',
        's.next_send_at',
        db.raw(
          `(SELECT count(*)::int FROM email_messages m WHERE m.account_id = a.id AND m.direction = 'outbound' AND m.kind = 'campaign'
             AND m.created_at >= ? AND m.status IN ('sending', 'sent', 'unknown', 'bounced')) AS sent_today`,
          [dayStart],
        ),
      );
    return rows;
  }

  async dueContacts(db: Executor, campaignId: string, now: Date, limit: number): Promise<DueContact[]> {
    return db('sending_progress as p')
      .join('contacts as c', 'c.id', 'p.contact_id')
      .where({ 'p.campaign_id': campaignId, 'p.state': 'waiting', 'c.status': 'active' })
      .andWhere('p.due_at', '<=', now)
      .orderBy([{ column: 'p.due_at' }, { column: 'p.contact_id' }])
      .limit(limit)
      .forUpdate('p')
      .skipLocked()
      .select('p.*', 'c.email', 'c.first_name', 'c.last_name', 'c.company_name', 'c.job_title', 'c.phone', 'c.website', 'c.linkedin_url', 'c.custom_variables');
  }

  async message(db: Executor, id: string): Promise<{ id: string; subject: string; message_id: string; references: string[]; thread_id: string } | undefined> {
    return db('email_messages').where({ id }).first('id', 'subject', 'message_id', 'references', 'thread_id');
  }

  async insertMessage(db: Executor, row: OutboundMessage): Promise<void> {
    await db('email_messages').insert(row);
  }

  async finishMessage(db: Executor, id: string, patch: { status: 'sent' | 'failed' | 'bounced' | 'unknown'; smtp_response: string; sent_at?: Date }): Promise<boolean> {
    // Only a claim still open is finished: one that expired to `unknown` stays so.
    const n = await db('email_messages').where({ id, status: 'sending' }).update(patch);
    return n > 0;
  }

  /** A message SMTP accepted that bounced later (a DSN): `bounced`, once. */
  async markLateBounce(db: Executor, id: string): Promise<{ account_id: string | null; contact_id: string | null; kind: string } | undefined> {
    const [row] = await db('email_messages').where({ id, direction: 'outbound' }).whereIn('status', ['sent', 'unknown']).update({ status: 'bounced' }).returning(['account_id', 'contact_id', 'kind']);
    return row;
  }

  async updateProgress(db: Executor, contactId: string, patch: Partial<ProgressRow>): Promise<void> {
    await db('sending_progress').where({ contact_id: contactId }).update(patch);
  }

  async setAccountPace(db: Executor, accountId: string, patch: { next_send_at?: Date; failures?: number | ReturnType<Executor['raw']> }): Promise<void> {
    await db('sending_accounts').where({ account_id: accountId }).update(patch);
  }

  async addAccountFailure(db: Executor, accountId: string): Promise<number> {
    const [row] = await db('sending_accounts').where({ account_id: accountId }).increment('failures', 1).returning('failures');
    return row?.failures ?? 0;
  }

  /** The account's last `n` finished campaign sends: how many, and how many bounced hard. */
  async recentOutcomes(db: Executor, accountId: string, n: number): Promise<{ total: number; bounced: number }> {
    const row = await db
      .from(
        db('email_messages')
          .where({ account_id: accountId, direction: 'outbound', kind: 'campaign' })
          .whereIn('status', ['sent', 'bounced'])
          .orderBy('created_at', 'desc')
          .limit(n)
          .select('status')
          .as('recent'),
      )
      .first(db.raw('count(*)::int AS total'), db.raw("count(*) FILTER (WHERE status = 'bounced')::int AS bounced"));
    return { total: row?.total ?? 0, bounced: row?.bounced ?? 0 };
  }

  /** Contacts of the campaign still to be mailed (active or paused). */
  async unfinishedContacts(db: Executor, campaignId: string): Promise<number> {
    const row = await db('contacts').where({ campaign_id: campaignId }).whereIn('status', ['active', 'paused']).first(db.raw('count(*)::int AS n'));
    return row?.n ?? 0;
  }

  // --- sending status ---

  async progressCounts(db: Executor, campaignId: string, now: Date): Promise<{ state: ProgressState; due: boolean; n: number }[]> {
    return db('sending_progress as p')
      .join('contacts as c', 'c.id', 'p.contact_id')
      .where('p.campaign_id', campaignId)
      .whereIn('c.status', ['active', 'paused'])
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

  async sentPerStep(db: Executor, campaignId: string): Promise<Map<string, number>> {
    const rows: { step_id: string; n: number }[] = await db('email_messages')
      .where({ campaign_id: campaignId, direction: 'outbound', kind: 'campaign', status: 'sent' })
      .groupBy('step_id')
      .select('step_id', db.raw('count(*)::int AS n'));
    return new Map(rows.map((r) => [r.step_id, r.n]));
  }

  async nextDue(db: Executor, campaignId: string): Promise<Date | null> {
    const row = await db('sending_progress').where({ campaign_id: campaignId, state: 'waiting' }).min('due_at as at').first();
    return row?.at ? new Date(row.at) : null;
  }

  async heldReasons(db: Executor, campaignId: string): Promise<string[]> {
    const rows = await db('sending_progress').where({ campaign_id: campaignId, state: 'held' }).distinct('reason').limit(20);
    return rows.map((r: { reason: string }) => r.reason);
  }

  async progressOf(db: Executor, contactId: string): Promise<ProgressRow | undefined> {
    return db('sending_progress').where({ contact_id: contactId }).first();
  }
}
