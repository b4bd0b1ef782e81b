/**
 * Subsequences: a campaign's other sequences, each entered by a trigger (a reply's intent or phrase, a lead
 * status the user set, an open or click of a step, the main sequence finished without a reply). A contact
 * whose trigger fires leaves the sequence it is in and starts the subsequence at its first step, in the same
 * thread; it enters a given subsequence at most once (`subsequence_entries`), so triggers cannot loop.
 * The inbox, tracking, the contact module and the sending engine call `fire` inside the transaction that
 * records what happened; the engine (through SubsequenceProgress) owns where the contact is.
 */
import type { components, operations } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { conflict, detail, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Page, Paged } from '../../platform/paging';
import type { EventService } from '../events';
import { checkDelay, checkName, checkVariantText, label, Problems, resolveWeights } from './rules';
import type { CampaignStore, VariantRow } from './store';
import type { SubsequenceRow, SubsequenceStepRow, SubsequenceStore, TriggerType } from './subsequence-store';
import { findCampaign, toSequenceStep } from './view';

type Schemas = components['schemas'];
type Subsequence = Schemas['Subsequence'];
type Trigger = Schemas['SubsequenceTrigger'];
type StepInput = Schemas['SequenceStepInput'];
type CreateInput = operations['createSubsequence']['requestBody']['content']['application/json'];
type UpdateInput = operations['updateSubsequence']['requestBody']['content']['application/json'];

/** A campaign's subsequences at most; the spec's create description says so. */
export const MAX_SUBSEQUENCES = 10;
const SUBSEQUENCE_NOT_FOUND = 'Subsequence not found.';

/** What happened to a contact, as a trigger reads it. `campaignId` is the contact's campaign. */
export type TriggerEvent = { workspaceId: string; campaignId: string; contactId: string } & (
  | { type: 'replied'; intent: string; text: string }
  | { type: 'leadStatus'; leadStatus: string }
  | { type: 'opened' | 'clicked'; stepId: string }
  | { type: 'noReply' }
);

const TYPES_OF: Record<TriggerEvent['type'], TriggerType[]> = {
  replied: ['replyIntent', 'replyContains'],
  leadStatus: ['leadStatus'],
  opened: ['opened'],
  clicked: ['clicked'],
  noReply: ['noReply'],
};

/** What the inbox, tracking, the contact module and the engine call when something happens to a contact. */
export type SubsequenceTriggers = Pick<SubsequenceService, 'fire'>;

/** Where contacts are, in the sending engine's progress rows (the composition root wires the engine in). */
export interface SubsequenceProgress {
  /** Moves the contact into the subsequence at step 1, due at `dueAt`; answers the subsequence it left. */
  enterSubsequence(
    trx: Executor,
    p: { contactId: string; workspaceId: string; campaignId: string; subsequenceId: string; dueAt: Date },
  ): Promise<{ fromSubsequenceId: string | null }>;
  /** Contacts still in each subsequence (not finished). */
  contactsInSubsequences(db: Executor, subsequenceIds: string[]): Promise<Map<string, number>>;
  /** Moves the subsequence's contacts back to the main sequence or ends their sequence; answers how many. */
  moveOutOfSubsequence(trx: Executor, workspaceId: string, subsequenceId: string, to: 'main' | 'none'): Promise<number>;
  /** The subsequence's contacts held while it was paused are due now. */
  releaseSubsequence(trx: Executor, subsequenceId: string): Promise<void>;
}

/** The contact module's part: a finished contact goes active again to enter (never a bounced or unsubscribed one). */
export interface SubsequenceContacts {
  reopenForSubsequence(trx: Executor, workspaceId: string, contactId: string): Promise<{ email: string } | null>;
}

/** All-time sends and replies per step (the events module's rollups). */
export interface StepTotals {
  stepTotals(
    db: Executor,
    workspaceId: string,
    stepIds: string[],
  ): Promise<Map<string, { sent: number; replied: number }>>;
}

/** What SubsequenceService is built from, by name. */
export interface SubsequenceServiceDeps {
  db: Db;
  store: SubsequenceStore;
  campaigns: CampaignStore;
  progress: SubsequenceProgress;
  contacts: SubsequenceContacts;
  totals: StepTotals;
  events: EventService;
  clock: Clock;
}

export class SubsequenceService {
  private readonly db: Db;
  private readonly store: SubsequenceStore;
  private readonly campaigns: CampaignStore;
  private readonly progress: SubsequenceProgress;
  private readonly contacts: SubsequenceContacts;
  private readonly totals: StepTotals;
  private readonly events: EventService;
  private readonly clock: Clock;

  constructor({ db, store, campaigns, progress, contacts, totals, events, clock }: SubsequenceServiceDeps) {
    this.db = db;
    this.store = store;
    this.campaigns = campaigns;
    this.progress = progress;
    this.contacts = contacts;
    this.totals = totals;
    this.events = events;
    this.clock = clock;
  }

  async create(workspaceId: string, input: CreateInput): Promise<Subsequence> {
    return this.db.transaction(async (trx) => {
      const campaign = await findCampaign(this.campaigns, trx, workspaceId, input.campaignId, { forUpdate: true });
      const p = new Problems();
      const name = checkName(p, input.name);
      const trigger = await this.checkTrigger(trx, p, campaign.id, input.trigger);
      const now = this.clock.now();
      const row: SubsequenceRow = {
        id: newId(),
        workspace_id: workspaceId,
        campaign_id: campaign.id,
        name,
        status: 'active',
        ...trigger,
        created_at: now,
        updated_at: now,
      };
      const steps = this.buildSteps(p, row, input.steps, now);
      p.throwIfAny();
      const count = await this.store.countInCampaign(trx, campaign.id);
      if (count >= MAX_SUBSEQUENCES) {
        throw conflict(`A campaign has at most ${MAX_SUBSEQUENCES} subsequences; this one has ${count}.`, [
          detail('campaignId', `the campaign has ${count} subsequences.`, 'max_subsequences'),
        ]);
      }
      await this.store.insert(trx, row);
      await this.store.replaceSteps(trx, row.id, steps.steps, steps.variants);
      return (await this.views(trx, workspaceId, [row]))[0];
    });
  }

  async list(workspaceId: string, campaignId: string, page: Page): Promise<Paged<Subsequence>> {
    await findCampaign(this.campaigns, this.db, workspaceId, campaignId);
    const { rows, total } = await this.store.page(this.db, workspaceId, campaignId, page);
    return { items: await this.views(this.db, workspaceId, rows), page, total };
  }

  async get(workspaceId: string, id: string): Promise<Subsequence> {
    const row = await this.find(this.db, workspaceId, id);
    return (await this.views(this.db, workspaceId, [row]))[0];
  }

  /** Name, trigger and steps (replaced whole); under the campaign's lock, so no claim reads half of it. */
  async update(workspaceId: string, input: UpdateInput): Promise<Subsequence> {
    return this.db.transaction(async (trx) => {
      const found = await this.find(trx, workspaceId, input.subsequenceId);
      await findCampaign(this.campaigns, trx, workspaceId, found.campaign_id, { forUpdate: true });
      const row = await this.find(trx, workspaceId, input.subsequenceId, true);
      const p = new Problems();
      const now = this.clock.now();
      const changes: Partial<SubsequenceRow> = { updated_at: now };
      if (input.name !== undefined) changes.name = checkName(p, input.name);
      if (input.trigger) Object.assign(changes, await this.checkTrigger(trx, p, row.campaign_id, input.trigger));
      const steps = input.steps ? this.buildSteps(p, row, input.steps, now) : undefined;
      p.throwIfAny();
      await this.store.update(trx, row.id, changes);
      if (steps) await this.store.replaceSteps(trx, row.id, steps.steps, steps.variants);
      return (await this.views(trx, workspaceId, [{ ...row, ...changes }]))[0];
    });
  }

  async delete(workspaceId: string, id: string, moveContactsTo?: 'main' | 'none') {
    return this.db.transaction(async (trx) => {
      const found = await this.find(trx, workspaceId, id);
      await findCampaign(this.campaigns, trx, workspaceId, found.campaign_id, { forUpdate: true });
      const inside = (await this.progress.contactsInSubsequences(trx, [id])).get(id) ?? 0;
      if (inside > 0 && !moveContactsTo) {
        throw conflict(
          `${inside === 1 ? '1 contact is' : `${inside} contacts are`} in this subsequence: delete with moveContactsTo=main (back to the main sequence) or moveContactsTo=none (their sequence ends), or pause it and delete it once they are done.`,
          [detail('moveContactsTo', `${inside} contacts are in the subsequence.`, 'contacts_in_subsequence', 'query')],
        );
      }
      const moved = moveContactsTo ? await this.progress.moveOutOfSubsequence(trx, workspaceId, id, moveContactsTo) : 0;
      await this.store.delete(trx, id);
      return { deletedSubsequenceId: id, contactsMoved: moved };
    });
  }

  async setStatus(workspaceId: string, id: string, status: 'active' | 'paused'): Promise<Subsequence> {
    return this.db.transaction(async (trx) => {
      const row = await this.find(trx, workspaceId, id, true);
      if (row.status === status) {
        throw conflict(`The subsequence is ${status} already.`, [
          detail('subsequenceId', `the subsequence is ${status}.`, 'invalid_status'),
        ]);
      }
      const updated = { ...row, status, updated_at: this.clock.now() };
      await this.store.update(trx, id, { status, updated_at: updated.updated_at });
      if (status === 'active') await this.progress.releaseSubsequence(trx, id);
      return (await this.views(trx, workspaceId, [updated]))[0];
    });
  }

  /**
   * Moves the contact into the oldest active subsequence of its campaign whose trigger matches and that it has
   * not entered, in the caller's transaction. Answers whether it entered one.
   */
  async fire(trx: Executor, e: TriggerEvent): Promise<boolean> {
    const candidates = await this.store.candidates(trx, e.campaignId, e.contactId, TYPES_OF[e.type]);
    const chosen = candidates.find((s) => matches(s, e));
    if (!chosen) return false;
    const contact = await this.contacts.reopenForSubsequence(trx, e.workspaceId, e.contactId);
    if (!contact) return false;
    const now = this.clock.now();
    const entered = await this.store.enter(trx, {
      subsequence_id: chosen.id,
      contact_id: e.contactId,
      workspace_id: e.workspaceId,
      entered_at: now,
    });
    if (!entered) return false;
    const { steps } = await this.store.steps(trx, [chosen.id]);
    const dueAt = new Date(now.getTime() + (steps[0]?.delay_minutes ?? 0) * 60_000);
    const { fromSubsequenceId } = await this.progress.enterSubsequence(trx, {
      contactId: e.contactId,
      workspaceId: e.workspaceId,
      campaignId: e.campaignId,
      subsequenceId: chosen.id,
      dueAt,
    });
    await this.events.record(trx, {
      workspaceId: e.workspaceId,
      type: 'contact.subsequenceEntered',
      occurredAt: now,
      data: {
        campaignId: e.campaignId,
        contactId: e.contactId,
        email: contact.email,
        subsequenceId: chosen.id,
        name: chosen.name,
        trigger: triggerOf(chosen),
        fromSubsequenceId,
        dueAt: dueAt.toISOString(),
      },
    });
    return true;
  }

  // Helpers ----------------------------------------------------------------------------------------

  private async find(db: Executor, workspaceId: string, id: string, forUpdate = false): Promise<SubsequenceRow> {
    const row = await this.store.find(db, workspaceId, id, { forUpdate });
    if (!row) throw notFound(SUBSEQUENCE_NOT_FOUND);
    return row;
  }

  /** The trigger as stored, after checking it names what exists (a step of this campaign) and only its own field. */
  private async checkTrigger(
    db: Executor,
    p: Problems,
    campaignId: string,
    t: Trigger,
  ): Promise<Pick<SubsequenceRow, 'trigger_type' | 'trigger_value' | 'trigger_step_id'>> {
    const own: Record<Trigger['type'], keyof Trigger | null> = {
      replyIntent: 'intent',
      leadStatus: 'leadStatus',
      opened: 'stepId',
      clicked: 'stepId',
      replyContains: 'phrase',
      noReply: null,
    };
    const field = own[t.type];
    for (const key of ['intent', 'leadStatus', 'stepId', 'phrase'] as const) {
      if (key !== field && t[key] !== undefined)
        p.add(`trigger.${key}`, `is not a field of a ${t.type} trigger.`, 'trigger_field');
    }
    if (field && (t[field] === undefined || t[field] === null))
      p.add(
        `trigger.${field}`,
        `a ${t.type} trigger names ${field === 'stepId' ? 'a step' : `a ${field}`}.`,
        'required',
      );
    if (t.type === 'replyContains' && t.phrase !== undefined && !t.phrase.trim())
      p.add('trigger.phrase', 'must not be blank.', 'blank');
    if (field === 'stepId' && t.stepId && !(await this.store.campaignStep(db, campaignId, t.stepId)))
      p.add('trigger.stepId', `step ${t.stepId} is not a step of campaign ${campaignId}.`, 'unknown_step');
    return {
      trigger_type: t.type,
      trigger_value:
        (t.type === 'replyIntent'
          ? t.intent
          : t.type === 'leadStatus'
            ? t.leadStatus
            : t.type === 'replyContains'
              ? t.phrase?.trim()
              : null) ?? null,
      trigger_step_id: field === 'stepId' ? (t.stepId ?? null) : null,
    };
  }

  /** The steps and variants of a subsequence as stored: the campaign's step rules, but the first step may wait. */
  private buildSteps(p: Problems, sub: SubsequenceRow, inputs: StepInput[], now: Date) {
    const steps: SubsequenceStepRow[] = [];
    const variants: VariantRow[] = [];
    inputs.forEach((input, i) => {
      const value = input.delay?.value ?? input.delayDays;
      // The first step waits after the contact enters (0 is fine); every later one at least 1 of its unit.
      const delay = checkDelay(p, `steps.${i}`, input, i === 0 && value === 0 ? 1 : 2, true);
      input.variants.forEach((v, j) => checkVariantText(p, `steps.${i}.variants.${j}`, v, false));
      // A subsequence reaches few contacts, each once: too few for an A/Z test to decide on.
      if (input.autoWinner) p.add(`steps.${i}.autoWinner`, 'is for steps of the main sequence only.', 'not_allowed');
      const weights = resolveWeights(
        p,
        `steps.${i}.variants`,
        [],
        input.variants.map((v) => v.weight),
      );
      const step: SubsequenceStepRow = {
        id: newId(),
        workspace_id: sub.workspace_id,
        campaign_id: sub.campaign_id,
        subsequence_id: sub.id,
        step_order: i + 1,
        delay_minutes: delay?.delay_minutes ?? 0,
        delay_unit: delay?.delay_unit ?? 'days',
        auto_winner: null,
        created_at: now,
      };
      steps.push(step);
      input.variants.forEach((v, j) =>
        variants.push({
          id: newId(),
          workspace_id: sub.workspace_id,
          campaign_id: sub.campaign_id,
          step_id: step.id,
          label: label(j),
          subject: v.subject,
          body: v.body,
          weight: weights[j],
          created_at: now,
        }),
      );
    });
    return { steps, variants };
  }

  private async views(db: Executor, workspaceId: string, rows: SubsequenceRow[]): Promise<Subsequence[]> {
    const ids = rows.map((r) => r.id);
    const { steps, variants } = await this.store.steps(db, ids);
    const entered = await this.store.entered(db, ids);
    const inside = await this.progress.contactsInSubsequences(db, ids);
    const totals = await this.totals.stepTotals(
      db,
      workspaceId,
      steps.map((s) => s.id),
    );
    return rows.map((r) => {
      const own = steps.filter((s) => s.subsequence_id === r.id);
      const sum = (key: 'sent' | 'replied') => own.reduce((n, s) => n + (totals.get(s.id)?.[key] ?? 0), 0);
      return {
        id: r.id,
        campaignId: r.campaign_id,
        name: r.name,
        status: r.status,
        trigger: triggerOf(r),
        // A subsequence's steps have no A/Z winner rule (refused on create and update).
        steps: own.map((s) => toSequenceStep(s, variants)),
        stats: {
          entered: entered.get(r.id) ?? 0,
          inSubsequence: inside.get(r.id) ?? 0,
          sent: sum('sent'),
          replied: sum('replied'),
        },
        createdAt: new Date(r.created_at).toISOString(),
        updatedAt: new Date(r.updated_at).toISOString(),
      };
    });
  }
}

function matches(s: SubsequenceRow, e: TriggerEvent): boolean {
  switch (s.trigger_type) {
    case 'replyIntent':
      return e.type === 'replied' && e.intent === s.trigger_value;
    case 'replyContains':
      return (
        e.type === 'replied' && s.trigger_value !== null && e.text.toLowerCase().includes(s.trigger_value.toLowerCase())
      );
    case 'leadStatus':
      return e.type === 'leadStatus' && e.leadStatus === s.trigger_value;
    case 'opened':
    case 'clicked':
      return e.type === s.trigger_type && s.trigger_step_id === e.stepId;
    case 'noReply':
      return e.type === 'noReply';
  }
}

function triggerOf(s: SubsequenceRow): Trigger {
  switch (s.trigger_type) {
    case 'replyIntent':
      return { type: s.trigger_type, intent: s.trigger_value as Trigger['intent'] };
    case 'leadStatus':
      return { type: s.trigger_type, leadStatus: s.trigger_value as Trigger['leadStatus'] };
    case 'replyContains':
      return { type: s.trigger_type, phrase: s.trigger_value ?? '' };
    case 'opened':
    case 'clicked':
      return { type: s.trigger_type, stepId: s.trigger_step_id };
    case 'noReply':
      return { type: s.trigger_type };
  }
}
