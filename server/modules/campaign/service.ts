/**
 * Campaign rules: the draft -> active <-> paused state machine (completed is derived when read, see
 * store.ts), launch readiness, linked accounts, and sequence steps and variants with their template,
 * delay, subject and weight rules. Every change runs in one transaction that first locks the campaign
 * row, so a launch and an edit of the same campaign never interleave.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../clock';
import type { Db, Executor } from '../../db';
import { badRequest, conflict, detail, notFound, type ErrorDetail } from '../../http/errors';
import { newId } from '../../ids';
import { parseTemplate, variantVariables } from './templates';
import type { EventService } from '../events/service';
import type { CampaignRow, CampaignStore, CampaignView, ScheduleJson, StepRow, VariantRow } from './store';
import { paginated, type Page } from '../../http/pagination';
import type { AccountService } from '../account/service';

/** A schedule as stored, which the sending engine reads. */
export type { ScheduleJson } from './store';

type Schemas = components['schemas'];
type Campaign = Schemas['Campaign'];
type Schedule = Schemas['CampaignSchedule'];
type OptionsInput = Schemas['CampaignOptionsInput'];
type SequenceStep = Schemas['SequenceStep'];
type StepInput = Schemas['SequenceStepInput'];
type VariantInput = Schemas['SequenceVariantInput'];
type VariantUpdate = Schemas['SequenceVariantUpdate'];
type CampaignAccount = Schemas['CampaignAccount'];
type AccountsChange = Schemas['CampaignAccountsChange'];

export const MAX_STEPS = 20;
export const MAX_VARIANTS = 26;

const CAMPAIGN_NOT_FOUND = 'Campaign not found.';
const STEP_NOT_FOUND = 'Sequence step not found.';
const VARIANT_NOT_FOUND = 'Variant not found.';

/** Collects every domain problem of a request, so one 400 names them all. */
class Problems {
  readonly details: ErrorDetail[] = [];
  add(field: string, message: string, code: string): void {
    this.details.push(detail(field, message, code));
  }
  throwIfAny(): void {
    if (this.details.length === 0) return;
    const [first] = this.details;
    const more = this.details.length > 1 ? ` (and ${this.details.length - 1} more problems)` : '';
    throw badRequest(`${first.field}: ${first.message}${more}`, this.details);
  }
}

const label = (index: number) => String.fromCharCode(65 + index);
const iso = (d: Date) => new Date(d).toISOString();

/** `n` weights that add up to 100, the first ones taking the remainder (34/33/33). */
export function evenWeights(n: number): number[] {
  const base = Math.floor(100 / n);
  return Array.from({ length: n }, (_, i) => base + (i < 100 - base * n ? 1 : 0));
}

/** Scales weights to add up to 100 keeping their proportions (largest remainder); all zero -> even. */
export function rescaleWeights(weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0) return evenWeights(weights.length);
  const exact = weights.map((w) => (w * 100) / sum);
  const result = exact.map(Math.floor);
  const order = exact.map((x, i) => ({ i, frac: x - Math.floor(x) })).sort((a, b) => b.frac - a.frac || a.i - b.i);
  const remainder = 100 - result.reduce((a, b) => a + b, 0);
  for (let k = 0; k < remainder; k++) result[order[k].i] += 1;
  return result;
}

function parseSchedule(raw: unknown): ScheduleJson | null {
  if (raw === null || raw === undefined) return null;
  return (typeof raw === 'string' ? JSON.parse(raw) : raw) as ScheduleJson;
}

export function toCampaign(v: CampaignView): Campaign {
  const schedule = parseSchedule(v.schedule);
  return {
    id: v.id,
    name: v.name,
    status: v.effective_status,
    schedule: schedule && { ...schedule, startDate: schedule.startDate ?? null, endDate: schedule.endDate ?? null },
    options: {
      dailyLimit: v.daily_limit,
      emailGapMinutes: v.email_gap_minutes,
      randomWaitMaxMinutes: v.random_wait_max_minutes,
      dailyNewContacts: v.daily_new_contacts,
      stopOnReply: v.stop_on_reply,
      stopForCompany: v.stop_for_company,
      stopOnAutoReply: v.stop_on_auto_reply,
      intentSetsLeadStatus: v.intent_sets_lead_status,
      trackOpens: v.track_opens,
      trackClicks: v.track_clicks,
      textOnly: v.text_only,
    },
    counts: { steps: v.step_count, accounts: v.account_count, contacts: v.contact_count },
    launchedAt: v.launched_at ? iso(v.launched_at) : null,
    createdAt: iso(v.created_at),
    updatedAt: iso(v.updated_at),
  };
}

function optionsToRow(options: OptionsInput | undefined): Partial<CampaignRow> {
  const row: Partial<CampaignRow> = {};
  if (!options) return row;
  if (options.dailyLimit !== undefined) row.daily_limit = options.dailyLimit;
  if (options.emailGapMinutes !== undefined) row.email_gap_minutes = options.emailGapMinutes;
  if (options.randomWaitMaxMinutes !== undefined) row.random_wait_max_minutes = options.randomWaitMaxMinutes;
  if (options.dailyNewContacts !== undefined) row.daily_new_contacts = options.dailyNewContacts;
  if (options.stopOnReply !== undefined) row.stop_on_reply = options.stopOnReply;
  if (options.stopForCompany !== undefined) row.stop_for_company = options.stopForCompany;
  if (options.stopOnAutoReply !== undefined) row.stop_on_auto_reply = options.stopOnAutoReply;
  if (options.intentSetsLeadStatus !== undefined) row.intent_sets_lead_status = options.intentSetsLeadStatus;
  if (options.trackOpens !== undefined) row.track_opens = options.trackOpens;
  if (options.trackClicks !== undefined) row.track_clicks = options.trackClicks;
  if (options.textOnly !== undefined) row.text_only = options.textOnly;
  return row;
}

function checkName(p: Problems, name: string): string {
  const trimmed = name.trim();
  if (!trimmed) p.add('name', 'must not be blank.', 'blank');
  return trimmed;
}

function isCalendarDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** Validates a schedule (IANA zone, from < to, end after start) and returns it as stored. */
function checkSchedule(p: Problems, s: Schedule, prefix: string): ScheduleJson {
  let timezone = s.timezone;
  try {
    // Intl also takes offsets such as "+05:00"; only IANA names are allowed here.
    if (!/^[A-Za-z]/.test(s.timezone)) throw new RangeError('not a zone name');
    timezone = new Intl.DateTimeFormat('en-US', { timeZone: s.timezone }).resolvedOptions().timeZone;
  } catch {
    p.add(`${prefix}.timezone`, `"${s.timezone}" is not an IANA time zone name (such as America/New_York or UTC).`, 'timezone');
  }
  if (s.from >= s.to) p.add(`${prefix}.to`, `must be after from (${s.from}).`, 'time_range');
  const startDate = s.startDate ?? null;
  const endDate = s.endDate ?? null;
  // The schema's `format: date` checks the shape only: 2026-02-30 passes it.
  for (const [key, value] of [['startDate', startDate], ['endDate', endDate]] as const) {
    if (value && !isCalendarDate(value)) p.add(`${prefix}.${key}`, `"${value}" is not a calendar date.`, 'format');
  }
  if (startDate && endDate && endDate <= startDate) p.add(`${prefix}.endDate`, `must be after startDate (${startDate}).`, 'date_range');
  return { timezone, days: [...s.days].sort((a, b) => a - b), from: s.from, to: s.to, startDate, endDate };
}

/** Template and thread rules for a variant's subject and body (only the fields given). */
function checkVariantText(p: Problems, field: string, v: { subject?: string; body?: string }, firstStep: boolean): void {
  if (v.subject !== undefined) {
    if (v.subject === '' && firstStep) {
      p.add(`${field}.subject`, 'must not be empty on the first step (an empty subject replies in the thread of the step before).', 'subject_required');
    }
    const parsed = parseTemplate(v.subject);
    if (!parsed.ok) p.add(`${field}.subject`, parsed.error, 'template');
  }
  if (v.body !== undefined) {
    const parsed = parseTemplate(v.body);
    if (!parsed.ok) p.add(`${field}.body`, parsed.error, 'template');
  }
}

function checkDelay(p: Problems, field: string, delayDays: number, order: number): void {
  if (order === 1 && delayDays !== 0) p.add(field, 'must be 0 on the first step.', 'first_step_delay');
  if (order > 1 && delayDays < 1) p.add(field, 'must be at least 1 after the first step.', 'delay');
}

/**
 * The weights of a step after adding `incoming` variants to `existing` ones: none given -> split
 * evenly over all; all given -> old and new must add up to 100.
 */
function resolveWeights(p: Problems, field: string, existing: number[], incoming: (number | undefined)[]): number[] {
  const given = incoming.filter((w): w is number => w !== undefined);
  if (given.length === 0) return evenWeights(existing.length + incoming.length);
  if (given.length < incoming.length) {
    const missing = incoming.findIndex((w) => w === undefined);
    p.add(`${field}.${missing}.weight`, 'give a weight on every new variant or on none (none splits the step evenly).', 'weight_missing');
    return [...existing, ...incoming.map((w) => w ?? 0)];
  }
  const all = [...existing, ...given];
  const sum = all.reduce((a, b) => a + b, 0);
  if (sum !== 100) p.add(field, `the step's variant weights must add up to 100, not ${sum}.`, 'weight_sum');
  return all;
}

/** The sending engine's progress rows, as a campaign going active needs them (in the caller's transaction). */
export interface CampaignProgressPort {
  /** Gives each active contact of the campaign without a progress row one at step 1, due now. */
  startCampaign(trx: Executor, campaignId: string): Promise<void>;
}

export class CampaignService {
  constructor(
    private readonly db: Db,
    private readonly store: CampaignStore,
    private readonly events: EventService,
    private readonly accounts: AccountService,
    private readonly progress: CampaignProgressPort,
    private readonly clock: Clock,
  ) {}

  /**
   * The workspace's campaign, or 404 "Campaign not found." (also for another workspace's). Other
   * modules may use it; inside a transaction pass the transaction, and `forUpdate` to lock the row.
   */
  async findInWorkspace(db: Executor, workspaceId: string, campaignId: string, options: { forUpdate?: boolean } = {}): Promise<CampaignView> {
    const campaign = await this.store.find(db, workspaceId, campaignId, options);
    if (!campaign) throw notFound(CAMPAIGN_NOT_FOUND);
    return campaign;
  }

  async list(workspaceId: string, page: Page & { status?: string }) {
    const { rows, total } = await this.store.list(this.db, workspaceId, page);
    return paginated(rows.map(toCampaign), page, total);
  }

  /** 404 "Campaign not found." unless the campaign is the workspace's: the cheap check for other modules. */
  async assertExists(db: Executor, workspaceId: string, campaignId: string): Promise<void> {
    if (!(await this.store.exists(db, workspaceId, campaignId))) throw notFound(CAMPAIGN_NOT_FOUND);
  }

  async get(workspaceId: string, campaignId: string): Promise<Campaign> {
    return toCampaign(await this.findInWorkspace(this.db, workspaceId, campaignId));
  }

  async create(
    workspaceId: string,
    input: { name: string; options?: OptionsInput; schedule?: Schedule; accountIds?: string[] },
  ): Promise<Campaign> {
    const p = new Problems();
    const name = checkName(p, input.name);
    const schedule = input.schedule ? checkSchedule(p, input.schedule, 'schedule') : null;
    p.throwIfAny();
    const now = this.clock.now();
    const id = newId();
    return this.db.transaction(async (trx) => {
      const accountIds = input.accountIds ?? [];
      await this.assertAccounts(trx, workspaceId, accountIds, 'accountIds');
      await this.store.insert(trx, {
        id,
        workspace_id: workspaceId,
        name,
        status: 'draft',
        schedule,
        daily_limit: null,
        stop_on_reply: true,
        stop_for_company: false,
        stop_on_auto_reply: false,
        intent_sets_lead_status: true,
        email_gap_minutes: 10,
        random_wait_max_minutes: 5,
        daily_new_contacts: null,
        track_opens: true,
        track_clicks: true,
        text_only: false,
        ...optionsToRow(input.options),
        launched_at: null,
        created_at: now,
        updated_at: now,
      });
      await this.store.link(trx, workspaceId, id, accountIds, now);
      return toCampaign(await this.findInWorkspace(trx, workspaceId, id));
    });
  }

  async setName(workspaceId: string, campaignId: string, rawName: string): Promise<Campaign> {
    const p = new Problems();
    const name = checkName(p, rawName);
    p.throwIfAny();
    return this.change(workspaceId, campaignId, async (trx) => {
      await this.store.update(trx, workspaceId, campaignId, { name });
    });
  }

  async setSchedule(workspaceId: string, campaignId: string, input: Schedule, options: OptionsInput | undefined): Promise<Campaign> {
    const p = new Problems();
    const schedule = checkSchedule(p, input, 'schedule');
    p.throwIfAny();
    return this.change(workspaceId, campaignId, async (trx) => {
      await this.store.update(trx, workspaceId, campaignId, { schedule, ...optionsToRow(options) });
    });
  }

  async launch(workspaceId: string, campaignId: string): Promise<Campaign> {
    return this.change(workspaceId, campaignId, async (trx, campaign) => {
      const status = campaign.effective_status;
      if (status === 'active') throw conflict('Campaign is already active.', [detail('campaignId', 'Campaign is already active.', 'invalid_status')]);
      if (status === 'completed') {
        const message = 'Campaign has completed: every contact has finished the sequence. Add contacts to resume it.';
        throw conflict(message, [detail('campaignId', message, 'invalid_status')]);
      }
      const missing: { piece: string; message: string; code: string }[] = [];
      if (campaign.step_count === 0) {
        missing.push({ piece: 'no sequence step', message: 'The campaign has no sequence step; add one with POST /v2/campaign/sequence-create.', code: 'no_sequence_step' });
      }
      if ((await this.sendableAccounts(trx, workspaceId, campaignId)) === 0) {
        missing.push({ piece: 'no active email account linked', message: 'No linked email account is active; link one with POST /v1/campaign/add/account.', code: 'no_active_account' });
      }
      if (!campaign.schedule) {
        missing.push({ piece: 'no schedule', message: 'The campaign has no schedule; set one with POST /v2/campaign/set/schedules.', code: 'no_schedule' });
      }
      if (missing.length) {
        throw conflict(
          `Campaign cannot be launched: ${missing.map((m) => m.piece).join(', ')}.`,
          missing.map((m) => detail('campaignId', m.message, m.code)),
        );
      }
      await this.store.update(trx, workspaceId, campaignId, { status: 'active', launched_at: campaign.launched_at ?? this.clock.now() });
      // Progress rows are made here and when contacts join an active campaign, so the worker never searches for them.
      await this.progress.startCampaign(trx, campaignId);
      await this.events.record(trx, { workspaceId, type: 'campaign.launched', data: { campaignId, name: campaign.name } });
    });
  }

  async pause(workspaceId: string, campaignId: string): Promise<Campaign> {
    return this.change(workspaceId, campaignId, async (trx, campaign) => {
      if (campaign.effective_status !== 'active') {
        const message = `Campaign is not active (status: ${campaign.effective_status}); only an active campaign can be paused.`;
        throw conflict(message, [detail('campaignId', message, 'invalid_status')]);
      }
      await this.store.update(trx, workspaceId, campaignId, { status: 'paused' });
      await this.events.record(trx, { workspaceId, type: 'campaign.paused', data: { campaignId, name: campaign.name, reason: 'user' } });
    });
  }

  // Linked accounts -------------------------------------------------------------------------------

  async listAccounts(workspaceId: string, campaignId: string, page: Page) {
    const campaign = await this.findInWorkspace(this.db, workspaceId, campaignId);
    const links = await this.store.links(this.db, campaignId, page);
    const accounts = await this.accounts.summaries(this.db, workspaceId, links.map((l) => l.account_id));
    // A link whose account went between the two reads (the link goes with it) is left out.
    const items: CampaignAccount[] = links.flatMap((l) => {
      const account = accounts.get(l.account_id);
      return account ? [{ ...account, linkedAt: iso(l.created_at) }] : [];
    });
    return { campaignId, ...paginated(items, page, campaign.account_count) };
  }

  /** How many of the campaign's linked accounts may send (status active). */
  private async sendableAccounts(db: Executor, workspaceId: string, campaignId: string): Promise<number> {
    return this.accounts.countActive(db, workspaceId, await this.store.linkedAccountIds(db, campaignId));
  }

  /** What the sending status reads of a campaign: how it reads, its schedule, its daily limit and its senders. */
  async sendingView(workspaceId: string, campaignId: string) {
    const campaign = await this.findInWorkspace(this.db, workspaceId, campaignId);
    const status = campaign.effective_status;
    return {
      id: campaign.id,
      status,
      schedule: parseSchedule(campaign.schedule),
      dailyLimit: campaign.daily_limit,
      sendableAccounts: status === 'active' ? await this.sendableAccounts(this.db, workspaceId, campaign.id) : null,
    };
  }

  // Removing an account (LinkedCampaigns, injected into the account module) ---------------------------

  lockLinkedTo(trx: Executor, workspaceId: string, accountId: string): Promise<{ id: string; name: string }[]> {
    return this.store.lockLinkedTo(trx, workspaceId, accountId);
  }

  /** An active campaign without any account has nothing to send from: it is paused, and the caller says so. */
  async pauseWithoutAccounts(trx: Executor, campaignIds: string[]): Promise<string[]> {
    const orphaned = await this.store.activeWithoutAccounts(trx, campaignIds);
    await this.store.pause(trx, orphaned, this.clock.now());
    return orphaned;
  }

  // Analytics ---------------------------------------------------------------------------------------

  countByStatus(db: Executor, workspaceId: string, campaignId?: string): Promise<Record<string, number>> {
    return this.store.countByStatus(db, workspaceId, campaignId);
  }

  stepsAndVariants(db: Executor, campaignId: string) {
    return this.store.stepsAndVariants(db, campaignId);
  }

  async setAccounts(workspaceId: string, campaignId: string, accountIds: string[]): Promise<AccountsChange> {
    return this.changeAccounts(workspaceId, campaignId, accountIds, 'accountIds', (current) => ({
      added: accountIds.filter((id) => !current.includes(id)),
      removed: current.filter((id) => !accountIds.includes(id)),
    }));
  }

  async addAccount(workspaceId: string, campaignId: string, accountId: string): Promise<AccountsChange> {
    return this.changeAccounts(workspaceId, campaignId, [accountId], 'accountId', (current) => ({
      added: current.includes(accountId) ? [] : [accountId],
      removed: [],
    }));
  }

  async removeAccounts(workspaceId: string, campaignId: string, accountIds: string[]): Promise<AccountsChange> {
    return this.changeAccounts(workspaceId, campaignId, accountIds, 'accountIds', (current) => ({
      added: [],
      removed: current.filter((id) => accountIds.includes(id)),
    }));
  }

  /**
   * Checks that every id is one of the workspace's email accounts, or throws 404 naming each unknown
   * one (`field.<index>`, or `field` itself for a single id).
   */
  private async assertAccounts(db: Executor, workspaceId: string, ids: string[], field: string): Promise<void> {
    const known = await this.accounts.existingIds(db, workspaceId, ids);
    const unknown = ids.map((id, index) => ({ id, index })).filter(({ id }) => !known.has(id));
    if (unknown.length === 0) return;
    throw notFound(
      `Email account not found: ${unknown.map((u) => u.id).join(', ')}.`,
      unknown.map((u) => detail(field === 'accountId' ? field : `${field}.${u.index}`, `Email account ${u.id} not found in this workspace.`, 'not_found')),
    );
  }

  private async changeAccounts(
    workspaceId: string,
    campaignId: string,
    ids: string[],
    field: string,
    plan: (current: string[]) => { added: string[]; removed: string[] },
  ): Promise<AccountsChange> {
    return this.db.transaction(async (trx) => {
      const campaign = await this.findInWorkspace(trx, workspaceId, campaignId, { forUpdate: true });
      await this.assertAccounts(trx, workspaceId, ids, field);
      const current = await this.store.linkedAccountIds(trx, campaignId);
      const { added, removed } = plan(current);
      // An active campaign (also one that reads completed: new contacts resume it) keeps a sender.
      if (campaign.status === 'active' && current.length + added.length - removed.length === 0) {
        throw conflict('An active campaign keeps at least one linked email account: pause it first, or link another account.', [
          detail(field, 'would leave the active campaign without an email account.', 'last_account'),
        ]);
      }
      const now = this.clock.now();
      await this.store.link(trx, workspaceId, campaignId, added, now);
      await this.store.unlink(trx, campaignId, removed);
      if (added.length || removed.length) await this.store.update(trx, workspaceId, campaignId, { updated_at: now });
      return { campaignId, accountIds: await this.store.linkedAccountIds(trx, campaignId), added, removed };
    });
  }

  // Sequence ---------------------------------------------------------------------------------------

  async createSteps(workspaceId: string, campaignId: string, inputs: StepInput[]) {
    return this.db.transaction(async (trx) => {
      const campaign = await this.findInWorkspace(trx, workspaceId, campaignId, { forUpdate: true });
      this.assertEditable(campaign);
      // Counted after the lock, in a statement of its own: the locked read's count is from before the wait.
      const existing = (await this.store.steps(trx, campaignId)).length;
      const p = new Problems();
      if (existing + inputs.length > MAX_STEPS) {
        p.add('steps', `a campaign has at most ${MAX_STEPS} steps; it has ${existing} and this adds ${inputs.length}.`, 'max_steps');
      }
      const now = this.clock.now();
      const steps: StepRow[] = [];
      const variants: VariantRow[] = [];
      inputs.forEach((input, i) => {
        const order = existing + i + 1;
        checkDelay(p, `steps.${i}.delayDays`, input.delayDays, order);
        input.variants.forEach((v, j) => checkVariantText(p, `steps.${i}.variants.${j}`, v, order === 1));
        const weights = resolveWeights(p, `steps.${i}.variants`, [], input.variants.map((v) => v.weight));
        const step: StepRow = { id: newId(), workspace_id: workspaceId, campaign_id: campaignId, step_order: order, delay_days: input.delayDays, created_at: now };
        steps.push(step);
        input.variants.forEach((v, j) => variants.push(this.newVariant(step, j, v, weights[j], now)));
      });
      p.throwIfAny();
      await this.store.insertSteps(trx, steps);
      await this.store.insertVariants(trx, variants);
      await this.touch(trx, workspaceId, campaignId);
      return { campaignId, steps: await this.sequence(trx, campaignId) };
    });
  }

  async updateStep(workspaceId: string, stepId: string, input: { delayDays?: number; variants?: VariantUpdate[] }) {
    return this.db.transaction(async (trx) => {
      const step = await this.lockStep(trx, workspaceId, stepId);
      const current = await this.store.variants(trx, [step.id]);
      const updates = input.variants ?? [];
      const p = new Problems();
      const seen = new Set<string>();
      updates.forEach((u, i) => {
        if (seen.has(u.id)) p.add(`variants.${i}.id`, `variant ${u.id} is listed twice.`, 'duplicate');
        seen.add(u.id);
      });
      p.throwIfAny();
      const unknown = updates.map((u, i) => ({ id: u.id, i })).filter(({ id }) => !current.some((v) => v.id === id));
      if (unknown.length) {
        throw notFound(
          `Variant not found in this step: ${unknown.map((u) => u.id).join(', ')}.`,
          unknown.map((u) => detail(`variants.${u.i}.id`, `Variant ${u.id} is not a variant of step ${stepId}.`, 'not_found')),
        );
      }
      if (input.delayDays !== undefined) checkDelay(p, 'delayDays', input.delayDays, step.step_order);
      updates.forEach((u, i) => checkVariantText(p, `variants.${i}`, u, step.step_order === 1));
      const weightOf = (v: VariantRow) => updates.find((u) => u.id === v.id)?.weight ?? v.weight;
      const sum = current.reduce((total, v) => total + weightOf(v), 0);
      if (sum !== 100) p.add('variants', `the step's variant weights must add up to 100, not ${sum}.`, 'weight_sum');
      p.throwIfAny();
      if (input.delayDays !== undefined) await this.store.updateStep(trx, step.id, { delay_days: input.delayDays });
      for (const u of updates) {
        const { id, ...changes } = u;
        await this.store.updateVariant(trx, id, changes);
      }
      await this.touch(trx, workspaceId, step.campaign_id);
      return { step: await this.oneStep(trx, step) };
    });
  }

  async deleteStep(workspaceId: string, stepId: string) {
    return this.db.transaction(async (trx) => {
      const step = await this.lockStep(trx, workspaceId, stepId);
      const steps = await this.store.steps(trx, step.campaign_id);
      const after = steps.filter((s) => s.step_order > step.step_order);
      if (step.step_order === 1 && after.length) {
        const next = await this.store.variants(trx, [after[0].id]);
        const threaded = next.filter((v) => v.subject === '').map((v) => v.label);
        if (threaded.length) {
          throw conflict(
            `The next step would become the first, but its variant ${threaded.join(', ')} replies in the thread of this one: give it a subject first.`,
            [detail('stepId', 'the next step has a variant with an empty subject.', 'subject_required', 'query')],
          );
        }
      }
      await this.store.deleteStep(trx, step.id);
      for (const s of after) {
        await this.store.updateStep(trx, s.id, { step_order: s.step_order - 1, ...(s.step_order === 2 ? { delay_days: 0 } : {}) });
      }
      await this.touch(trx, workspaceId, step.campaign_id);
      return { campaignId: step.campaign_id, deletedStepId: step.id, steps: await this.sequence(trx, step.campaign_id) };
    });
  }

  async createVariants(workspaceId: string, stepId: string, inputs: VariantInput[]) {
    return this.db.transaction(async (trx) => {
      const step = await this.lockStep(trx, workspaceId, stepId);
      const current = await this.store.variants(trx, [step.id]);
      const p = new Problems();
      if (current.length + inputs.length > MAX_VARIANTS) {
        p.add('variants', `a step has at most ${MAX_VARIANTS} variants (A-Z); it has ${current.length} and this adds ${inputs.length}.`, 'max_variants');
      }
      inputs.forEach((v, i) => checkVariantText(p, `variants.${i}`, v, step.step_order === 1));
      const weights = resolveWeights(p, 'variants', current.map((v) => v.weight), inputs.map((v) => v.weight));
      p.throwIfAny();
      const now = this.clock.now();
      for (const [i, v] of current.entries()) {
        if (weights[i] !== v.weight) await this.store.updateVariant(trx, v.id, { weight: weights[i] });
      }
      await this.store.insertVariants(trx, inputs.map((v, i) => this.newVariant(step, current.length + i, v, weights[current.length + i], now)));
      await this.touch(trx, workspaceId, step.campaign_id);
      return { step: await this.oneStep(trx, step) };
    });
  }

  async deleteVariant(workspaceId: string, variantId: string) {
    return this.db.transaction(async (trx) => {
      const found = await this.store.findVariant(trx, workspaceId, variantId);
      if (!found) throw notFound(VARIANT_NOT_FOUND);
      const step = await this.lockStep(trx, workspaceId, found.step_id);
      const siblings = await this.store.variants(trx, [step.id]);
      if (!siblings.some((v) => v.id === variantId)) throw notFound(VARIANT_NOT_FOUND);
      if (siblings.length === 1) {
        throw conflict('A step keeps at least one variant: delete the step instead (DELETE /v2/campaign/sequences-delete).', [
          detail('variantId', 'is the only variant of its step.', 'last_variant', 'query'),
        ]);
      }
      await this.store.deleteVariant(trx, variantId);
      const rest = siblings.filter((v) => v.id !== variantId);
      const weights = rescaleWeights(rest.map((v) => v.weight));
      // Ascending order: each new label was freed by the delete or by the update before it.
      for (const [i, v] of rest.entries()) {
        if (v.label !== label(i) || v.weight !== weights[i]) await this.store.updateVariant(trx, v.id, { label: label(i), weight: weights[i] });
      }
      await this.touch(trx, workspaceId, step.campaign_id);
      return { deletedVariantId: variantId, step: await this.oneStep(trx, step) };
    });
  }

  // Helpers ----------------------------------------------------------------------------------------

  /** Runs `apply` on the locked campaign in one transaction, bumps updated_at, returns the campaign. */
  private async change(workspaceId: string, campaignId: string, apply: (trx: Executor, campaign: CampaignView) => Promise<void>): Promise<Campaign> {
    return this.db.transaction(async (trx) => {
      const campaign = await this.findInWorkspace(trx, workspaceId, campaignId, { forUpdate: true });
      await apply(trx, campaign);
      await this.touch(trx, workspaceId, campaignId);
      return toCampaign(await this.findInWorkspace(trx, workspaceId, campaignId));
    });
  }

  private async touch(trx: Executor, workspaceId: string, campaignId: string): Promise<void> {
    await this.store.update(trx, workspaceId, campaignId, { updated_at: this.clock.now() });
  }

  /** Sequence edits need a campaign that is not sending; a completed one may be edited. */
  private assertEditable(campaign: CampaignView): void {
    if (campaign.effective_status === 'active') {
      throw conflict('Campaign is active: pause it before editing its sequence.', [
        detail('campaignId', 'the campaign is active.', 'invalid_status'),
      ]);
    }
  }

  /** Finds the workspace's step, locks its campaign, re-reads the step under the lock, checks editability. */
  private async lockStep(trx: Executor, workspaceId: string, stepId: string): Promise<StepRow> {
    const found = await this.store.findStep(trx, workspaceId, stepId);
    if (!found) throw notFound(STEP_NOT_FOUND);
    const campaign = await this.findInWorkspace(trx, workspaceId, found.campaign_id, { forUpdate: true });
    const step = await this.store.findStep(trx, workspaceId, stepId);
    if (!step) throw notFound(STEP_NOT_FOUND);
    this.assertEditable(campaign);
    return step;
  }

  private newVariant(step: StepRow, index: number, v: VariantInput, weight: number, now: Date): VariantRow {
    return {
      id: newId(),
      workspace_id: step.workspace_id,
      campaign_id: step.campaign_id,
      step_id: step.id,
      label: label(index),
      subject: v.subject,
      body: v.body,
      weight,
      created_at: now,
    };
  }

  private async sequence(db: Executor, campaignId: string): Promise<SequenceStep[]> {
    const steps = await this.store.steps(db, campaignId);
    const variants = await this.store.variants(db, steps.map((s) => s.id));
    return steps.map((s) => ({
      id: s.id,
      campaignId: s.campaign_id,
      order: s.step_order,
      delayDays: s.delay_days,
      variants: variants
        .filter((v) => v.step_id === s.id)
        .map((v) => ({ id: v.id, label: v.label, subject: v.subject, body: v.body, weight: v.weight, variables: variantVariables(v.subject, v.body) })),
    }));
  }

  private async oneStep(db: Executor, step: StepRow): Promise<SequenceStep> {
    return (await this.sequence(db, step.campaign_id)).find((s) => s.id === step.id)!;
  }
}
