/**
 * Campaign rules: the draft -> active <-> paused state machine (completed is derived when read, see store.ts) and
 * launch readiness, here; linked accounts in accounts.ts; sequence steps and variants in sequence.ts; request checks
 * in rules.ts. Every change runs in one transaction, and one that checks the campaign first locks its row, so a launch
 * and an edit of the same campaign never interleave.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { conflict, detail, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Page } from '../../platform/paging';
import type { EventService } from '../events';
import type { TrackingDomainService } from '../tracking-domain';
import { CampaignAccounts, type CampaignAccountsOf } from './accounts';
import { checkName, checkSchedule, optionsToRow, Problems } from './rules';
import { CampaignSequence, type StepUpdate } from './sequence';
import type { CampaignChanges, CampaignStore, CampaignView } from './store';
import { CAMPAIGN_NOT_FOUND, copiesOf, findCampaign, parseSchedule, toCampaign } from './view';

/** A schedule as stored, which the sending engine reads. */
export type { ScheduleJson } from './store';

type Schemas = components['schemas'];
type Campaign = Schemas['Campaign'];
type Schedule = Schemas['CampaignSchedule'];
type OptionsInput = Schemas['CampaignOptionsInput'];
type StepInput = Schemas['SequenceStepInput'];
type VariantInput = Schemas['SequenceVariantInput'];

/** The sending engine's progress rows, as a campaign going active needs them (in the caller's transaction). */
export interface CampaignProgressPort {
  /** Gives each active contact of the campaign without a progress row one at step 1, due now. */
  startCampaign(trx: Executor, campaignId: string): Promise<void>;
}

/** What CampaignService is built from, by name. */
export interface CampaignServiceDeps {
  db: Db;
  store: CampaignStore;
  events: Pick<EventService, 'record'>;
  accounts: CampaignAccountsOf;
  progress: CampaignProgressPort;
  clock: Clock;
  trackingDomains: Pick<TrackingDomainService, 'requireVerified'>;
}

export class CampaignService {
  private readonly linked: CampaignAccounts;
  private readonly sequence: CampaignSequence;

  private readonly db: Db;
  private readonly store: CampaignStore;
  private readonly events: Pick<EventService, 'record'>;
  private readonly progress: CampaignProgressPort;
  private readonly clock: Clock;
  private readonly trackingDomains: Pick<TrackingDomainService, 'requireVerified'>;

  constructor({ db, store, events, accounts, progress, clock, trackingDomains }: CampaignServiceDeps) {
    this.db = db;
    this.store = store;
    this.events = events;
    this.progress = progress;
    this.clock = clock;
    this.trackingDomains = trackingDomains;

    this.linked = new CampaignAccounts({ db, store, accounts, clock });
    this.sequence = new CampaignSequence({ db, store, clock });
  }

  /**
   * The workspace's campaign, or 404 "Campaign not found." (also for another workspace's). Other
   * modules may use it; inside a transaction pass the transaction, and `forUpdate` to lock the row.
   */
  findInWorkspace(
    db: Executor,
    workspaceId: string,
    campaignId: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<CampaignView> {
    return findCampaign(this.store, db, workspaceId, campaignId, options);
  }

  async list(workspaceId: string, page: Page & { status?: string }) {
    const { rows, total } = await this.store.list(this.db, workspaceId, page);
    return { items: rows.map(toCampaign), page, total };
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
      await this.linked.assertAccounts(trx, workspaceId, accountIds, 'accountIds');
      await this.checkTrackingDomain(trx, workspaceId, input.options);
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
        send_in_lead_timezone: false,
        tracking_domain_id: null,
        recipient_domain_daily_limit: null,
        match_provider: false,
        match_provider_strict: false,
        send_priority: 'dueFirst',
        first_email_text_only: false,
        copy_to: { cc: [], bcc: [] },
        stop_on_open: false,
        stop_on_click: false,
        verified_only: false,
        ...optionsToRow(input.options),
        pause_reason_code: null,
        pause_reason_message: null,
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
    // A rename checks nothing of the campaign: its update takes the row's lock.
    return this.db.transaction((trx) => this.write(trx, workspaceId, campaignId, { name }));
  }

  async setSchedule(
    workspaceId: string,
    campaignId: string,
    input: Schedule,
    options: OptionsInput | undefined,
  ): Promise<Campaign> {
    const p = new Problems();
    const schedule = checkSchedule(p, input, 'schedule');
    p.throwIfAny();
    return this.change(workspaceId, campaignId, async (trx, campaign) => {
      await this.checkTrackingDomain(trx, workspaceId, options);
      return { schedule, ...optionsToRow(options, copiesOf(campaign.copy_to)) };
    });
  }

  /** A tracking domain chosen in the options must be the workspace's and verified. */
  private async checkTrackingDomain(trx: Executor, workspaceId: string, options: OptionsInput | undefined) {
    if (options?.trackingDomainId)
      await this.trackingDomains.requireVerified(
        trx,
        workspaceId,
        options.trackingDomainId,
        'options.trackingDomainId',
      );
  }

  async launch(workspaceId: string, campaignId: string): Promise<Campaign> {
    return this.change(workspaceId, campaignId, async (trx, campaign) => {
      const status = campaign.effective_status;
      if (status === 'active')
        throw conflict('Campaign is already active.', [
          detail('campaignId', 'Campaign is already active.', 'invalid_status'),
        ]);
      if (status === 'completed') {
        const message = 'Campaign has completed: every contact has finished the sequence. Add contacts to resume it.';
        throw conflict(message, [detail('campaignId', message, 'invalid_status')]);
      }
      const missing: { piece: string; message: string; code: string }[] = [];
      if (campaign.step_count === 0) {
        missing.push({
          piece: 'no sequence step',
          message: 'The campaign has no sequence step; add one with POST /v2/campaign/sequence-create.',
          code: 'no_sequence_step',
        });
      }
      if ((await this.linked.sendableAccounts(trx, workspaceId, campaignId)) === 0) {
        missing.push({
          piece: 'no active email account linked',
          message: 'No linked email account is active; link one with POST /v1/campaign/add/account.',
          code: 'no_active_account',
        });
      }
      if (!campaign.schedule) {
        missing.push({
          piece: 'no schedule',
          message: 'The campaign has no schedule; set one with POST /v2/campaign/set/schedules.',
          code: 'no_schedule',
        });
      }
      if (missing.length) {
        throw conflict(
          `Campaign cannot be launched: ${missing.map((m) => m.piece).join(', ')}.`,
          missing.map((m) => detail('campaignId', m.message, m.code)),
        );
      }
      // Progress rows are made here and when contacts join an active campaign, so the worker never searches for them.
      await this.progress.startCampaign(trx, campaignId);
      await this.events.record(trx, {
        workspaceId,
        type: 'campaign.launched',
        data: { campaignId, name: campaign.name },
      });
      return {
        status: 'active',
        pause_reason_code: null,
        pause_reason_message: null,
        launched_at: campaign.launched_at ?? this.clock.now(),
      };
    });
  }

  async pause(workspaceId: string, campaignId: string): Promise<Campaign> {
    return this.change(workspaceId, campaignId, async (trx, campaign) => {
      if (campaign.effective_status !== 'active') {
        const message = `Campaign is not active (status: ${campaign.effective_status}); only an active campaign can be paused.`;
        throw conflict(message, [detail('campaignId', message, 'invalid_status')]);
      }
      await this.events.record(trx, {
        workspaceId,
        type: 'campaign.paused',
        data: { campaignId, name: campaign.name, reason: 'user' },
      });
      return {
        status: 'paused',
        pause_reason_code: 'user',
        pause_reason_message: 'Paused with POST /v2/campaign/pause.',
      };
    });
  }

  /**
   * Bounce protection of a campaign (the sending engine, in its transaction): an active campaign is paused
   * with the reason `bounce_rate` and `campaign.paused` is recorded; nothing happens to one not active.
   */
  async pauseForBounces(trx: Executor, workspaceId: string, campaignId: string, message: string): Promise<void> {
    const name = await this.store.pauseIfActive(trx, campaignId, { code: 'bounce_rate', message }, this.clock.now());
    if (name === null) return;
    await this.events.record(trx, {
      workspaceId,
      type: 'campaign.paused',
      data: { campaignId, name, reason: 'bounce_rate', message },
    });
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
      sendInLeadTimezone: campaign.send_in_lead_timezone,
      sendableAccounts:
        status === 'active' ? await this.linked.sendableAccounts(this.db, workspaceId, campaign.id) : null,
    };
  }

  // Analytics ---------------------------------------------------------------------------------------

  countByStatus(db: Executor, workspaceId: string, campaignId?: string): Promise<Record<string, number>> {
    return this.store.countByStatus(db, workspaceId, campaignId);
  }

  stepsAndVariants(db: Executor, campaignId: string) {
    return this.store.stepsAndVariants(db, campaignId);
  }

  // Linked accounts (accounts.ts) -------------------------------------------------------------------

  listAccounts(workspaceId: string, campaignId: string, page: Page) {
    return this.linked.listAccounts(workspaceId, campaignId, page);
  }

  setAccounts(workspaceId: string, campaignId: string, accountIds: string[]) {
    return this.linked.setAccounts(workspaceId, campaignId, accountIds);
  }

  addAccount(workspaceId: string, campaignId: string, accountId: string) {
    return this.linked.addAccount(workspaceId, campaignId, accountId);
  }

  removeAccounts(workspaceId: string, campaignId: string, accountIds: string[]) {
    return this.linked.removeAccounts(workspaceId, campaignId, accountIds);
  }

  /** Removing an account (LinkedCampaigns, injected into the account module): lock the campaigns linked to it. */
  lockLinkedTo(trx: Executor, workspaceId: string, accountId: string) {
    return this.linked.lockLinkedTo(trx, workspaceId, accountId);
  }

  pauseWithoutAccounts(trx: Executor, campaignIds: string[]) {
    return this.linked.pauseWithoutAccounts(trx, campaignIds);
  }

  pauseWithoutSenders(trx: Executor, campaignIds: string[]) {
    return this.linked.pauseWithoutSenders(trx, campaignIds);
  }

  // Sequence (sequence.ts) --------------------------------------------------------------------------

  createSteps(workspaceId: string, campaignId: string, inputs: StepInput[]) {
    return this.sequence.createSteps(workspaceId, campaignId, inputs);
  }

  updateStep(workspaceId: string, stepId: string, input: StepUpdate) {
    return this.sequence.updateStep(workspaceId, stepId, input);
  }

  deleteStep(workspaceId: string, stepId: string) {
    return this.sequence.deleteStep(workspaceId, stepId);
  }

  createVariants(workspaceId: string, stepId: string, inputs: VariantInput[]) {
    return this.sequence.createVariants(workspaceId, stepId, inputs);
  }

  deleteVariant(workspaceId: string, variantId: string) {
    return this.sequence.deleteVariant(workspaceId, variantId);
  }

  /**
   * Runs `apply` on the locked campaign in one transaction and writes the row changes it returns; returns the
   * campaign as changed.
   */
  private async change(
    workspaceId: string,
    campaignId: string,
    apply: (trx: Executor, campaign: CampaignView) => Promise<CampaignChanges>,
  ): Promise<Campaign> {
    return this.db.transaction(async (trx) => {
      const campaign = await this.findInWorkspace(trx, workspaceId, campaignId, { forUpdate: true });
      return this.write(trx, workspaceId, campaignId, await apply(trx, campaign));
    });
  }

  /** Writes `changes` with updated_at and returns the campaign as changed; 404 unless it is the workspace's. */
  private async write(trx: Executor, workspaceId: string, campaignId: string, changes: CampaignChanges) {
    const view = await this.store.updateView(trx, workspaceId, campaignId, {
      ...changes,
      updated_at: this.clock.now(),
    });
    if (!view) throw notFound(CAMPAIGN_NOT_FOUND);
    return toCampaign(view);
  }
}
