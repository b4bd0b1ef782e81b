/**
 * Each contact's place in its campaign's sequence: progress rows made when contacts join an active campaign
 * and when a campaign goes active, moved between campaigns and in and out of subsequences, read for the contact.
 */
import type { components } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { MINUTE } from './options';
import type { SendingContacts } from './outcome';
import type { SendingStep, SendingStore } from './store';

/** What SequenceProgress is built from, by name. */
interface SequenceProgressDeps {
  db: Db;
  store: SendingStore;
  contacts: SendingContacts;
  clock: Clock;
}

/** The progress rows of the sending engine, as other modules change and read them. */
export class SequenceProgress {
  private readonly db: Db;
  private readonly store: SendingStore;
  private readonly contacts: SendingContacts;
  private readonly clock: Clock;

  constructor({ db, store, contacts, clock }: SequenceProgressDeps) {
    this.db = db;
    this.store = store;
    this.contacts = contacts;
    this.clock = clock;
  }
  /** Progress rows for contacts that joined an active campaign or became active in one (their add, resume or move transaction). */
  startContacts(trx: Executor, contactIds: string[]): Promise<void> {
    return this.store.startContacts(trx, contactIds, this.clock.now());
  }

  /** Progress rows for the active contacts of a campaign going active (its launch transaction). */
  startCampaign(trx: Executor, campaignId: string): Promise<void> {
    return this.store.startCampaign(trx, campaignId, this.clock.now());
  }

  /**
   * Moves contacts' progress to another campaign (POST /v2/contact/move, in its transaction). Dropped, the
   * contact starts the target at step 1 (a new progress row once it is active in an active target). Kept, the row keeps its
   * step number, due time, account and last message (so the next step threads after the last one); a row
   * that had finished its old sequence continues at the same step number when the target has it, due that
   * step's delay after the last send. Returns the contacts past the target's last step.
   */
  async moveProgress(
    trx: Executor,
    contactIds: string[],
    toCampaignId: string,
    keepProgress: boolean,
  ): Promise<Set<string>> {
    const past = new Set<string>();
    if (!keepProgress) {
      await this.store.deleteProgress(trx, contactIds);
      return past;
    }
    const steps = await this.store.steps(trx, toCampaignId);
    const now = this.clock.now();
    for (const locked of await this.store.lockProgress(trx, contactIds)) {
      // A contact in a subsequence (which stays with its campaign) goes on from where it left the main sequence.
      const row = locked.subsequence_id
        ? { ...locked, step_number: locked.main_step_number ?? 1, state: 'waiting' as const, due_at: now }
        : locked;
      const step = steps[row.step_number - 1];
      if (!step) {
        past.add(row.contact_id);
        await this.store.updateProgress(trx, row.contact_id, {
          campaign_id: toCampaignId,
          subsequence_id: null,
          state: 'done',
          reason: null,
          updated_at: now,
        });
        continue;
      }
      const finished = row.state === 'done' && row.reason === null;
      const dueAt = finished
        ? new Date(
            Math.max(now.getTime(), (row.last_sent_at?.getTime() ?? now.getTime()) + step.delay_minutes * MINUTE),
          )
        : row.due_at;
      await this.store.updateProgress(trx, row.contact_id, {
        campaign_id: toCampaignId,
        ...(locked.subsequence_id
          ? { subsequence_id: null, step_number: row.step_number, state: 'waiting', due_at: now, reason: null }
          : {}),
        ...(finished ? { state: 'waiting', due_at: dueAt } : {}),
        updated_at: now,
      });
    }
    return past;
  }

  // --- subsequences (the campaign module's SubsequenceProgress) ---

  enterSubsequence(
    trx: Executor,
    p: { contactId: string; workspaceId: string; campaignId: string; subsequenceId: string; dueAt: Date },
  ): Promise<{ fromSubsequenceId: string | null }> {
    return this.store.enterSubsequence(trx, { ...p, now: this.clock.now() });
  }

  contactsInSubsequences(db: Executor, subsequenceIds: string[]): Promise<Map<string, number>> {
    return this.store.contactsInSubsequences(db, subsequenceIds);
  }

  /**
   * The subsequence's unfinished contacts go back to the main sequence at the step where they left it (due now;
   * past its last step they finish), or finish (`none`). Answers how many moved.
   */
  async moveOutOfSubsequence(
    trx: Executor,
    workspaceId: string,
    subsequenceId: string,
    to: 'main' | 'none',
  ): Promise<number> {
    const rows = await this.store.lockInSubsequence(trx, subsequenceId);
    const now = this.clock.now();
    const main = new Map<string, SendingStep[]>();
    for (const row of rows) {
      if (!main.has(row.campaign_id)) main.set(row.campaign_id, await this.store.steps(trx, row.campaign_id));
      const stepNumber = row.main_step_number ?? 1;
      const back = to === 'main' && stepNumber <= main.get(row.campaign_id)!.length;
      await this.store.updateProgress(trx, row.contact_id, {
        subsequence_id: null,
        step_number: stepNumber,
        state: back ? 'waiting' : 'done',
        due_at: back ? now : row.due_at,
        reason: null,
        updated_at: now,
      });
      if (!back) await this.contacts.finishForMail(trx, workspaceId, row.contact_id, 'completed');
    }
    return rows.length;
  }

  releaseSubsequence(trx: Executor, subsequenceId: string): Promise<void> {
    return this.store.releaseSubsequence(trx, subsequenceId, this.clock.now());
  }

  /** A contact's place in its sequence, for `GET /v1/contact/get`. */
  async contactProgress(contactId: string): Promise<components['schemas']['ContactProgress'] | null> {
    const p = await this.store.progressOf(this.db, contactId);
    if (!p) return null;
    return {
      state: p.state,
      subsequenceId: p.subsequence_id,
      nextStep: p.state === 'done' ? null : p.step_number,
      stepsSent: p.step_number - 1,
      lastSentAt: p.last_sent_at ? p.last_sent_at.toISOString() : null,
      nextDueAt: p.state === 'waiting' ? p.due_at.toISOString() : null,
      reason: p.reason,
    };
  }
}
