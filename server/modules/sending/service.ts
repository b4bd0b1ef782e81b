/**
 * The sending engine. Each run of the worker job:
 *   0. records what this process could not while the database was away: SMTP outcomes it holds, and
 *      claims it never handed to SMTP (their contacts are due again at once);
 *   1. settles claims another worker lost (it died, or lost its database): one handed to SMTP without an
 *      outcome turns `unknown` after its lease (it may have gone out, so it is reported, never sent again
 *      by itself); one never handed over goes back to the queue after a short lease;
 *   2. gives held contacts whose fields changed another try;
 *   3. per active campaign with due contacts (found through the due index, never by walking contacts), in
 *      one short transaction: locks the campaign (SKIP LOCKED, so another worker takes another campaign),
 *      checks the schedule, locks the linked accounts' pace rows and, when one of them may send now,
 *      claims due contacts (SKIP LOCKED), picks variant and account, renders, and stores each message as
 *      `sending` before any network I/O;
 *   4. hands the claimed messages to SMTP, each after committing `handed_at` (a claim released meanwhile
 *      is skipped), and records each outcome in its own transaction with its event.
 * A (contact, step) is claimed by one transaction only, so two workers never send it twice. Progress rows
 * are made when contacts join an active campaign and when a campaign goes active (startContacts,
 * startCampaign, in those transactions), so no run searches for contacts without one.
 *
 * Cut along its jobs: the claim (step 3) in claim.ts; the hand-over to SMTP and what this process holds
 * while the database is away (steps 0 and 4) in delivery.ts; each outcome in outcome.ts; bounce accounting
 * in bounces.ts; the workspace's settings in settings.ts; the sending status in status.ts; the progress rows
 * other modules move in progress.ts. This service runs the passes and composes them.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Backlog } from '../../observability/telemetry';
import type { Db, Executor } from '../../db';
import type { AccountMailAccess } from '../account';
import type { EventService } from '../events';
import type { MailService } from '../mail';
import type { SuppressionService } from '../suppression';
import type { SubsequenceTriggers } from '../campaign';
import { BounceProtection, type CampaignBounces } from './bounces';
import { SendingClaims, type MessageLinks, type WarmupSends } from './claim';
import { SmtpHandOver, type MessageOutcome } from './delivery';
import { ContactGates, type VerifiedAddresses } from './gates';
import { DEFAULT_ENGINE_OPTIONS, type EngineOptions } from './options';
import { SendingOutcomes, type SendingContacts } from './outcome';
import { MessagePreview, type PreviewedCampaign } from './preview';
import { PreviewStore } from './preview-store';
import { SequenceProgress } from './progress';
import { mailDomainOf, type MailboxProvider, type RecipientProviders } from './providers';
import { WorkspaceSendingSettings } from './settings';
import { SendingStatusReader } from './status';
import type { SendingStore } from './store';
import { VariantWinners } from './winner';
import { StepTestStore } from './winner-store';

type SendingSettings = components['schemas']['SendingSettings'];

/** What SendingService is built from, by name. */
export interface SendingServiceDeps {
  db: Db;
  store: SendingStore;
  accounts: AccountMailAccess;
  contacts: SendingContacts;
  events: EventService;
  suppression: SuppressionService;
  links: MessageLinks;
  mail: MailService;
  warmup: WarmupSends;
  clock: Clock;
  providers: RecipientProviders;
  campaigns: CampaignBounces;
  triggers: SubsequenceTriggers;
  verified: VerifiedAddresses;
  options?: Partial<EngineOptions>;
}
export class SendingService {
  /** Runs in progress; stop() marks them: nothing more is handed to SMTP, and their remaining claims are released. */
  private readonly running = new Set<{ stopped: boolean }>();
  /** The last campaign this process looked at: the next run starts after it. */
  private lastCampaign: string | null = null;
  private readonly db: Db;
  private readonly store: SendingStore;
  private readonly mail: MailService;
  private readonly clock: Clock;
  private readonly providers: RecipientProviders;
  private readonly options: EngineOptions;
  private readonly winners: VariantWinners;
  private readonly previews: MessagePreview;
  private readonly claims: SendingClaims;
  private readonly handOver: SmtpHandOver;
  private readonly bounces: BounceProtection;
  private readonly workspaceSettings: WorkspaceSendingSettings;
  private readonly statuses: SendingStatusReader;
  private readonly progress: SequenceProgress;

  constructor({
    db,
    store,
    accounts,
    contacts,
    events,
    suppression,
    links,
    mail,
    warmup,
    clock,
    providers,
    campaigns,
    triggers,
    verified,
    options = {},
  }: SendingServiceDeps) {
    this.db = db;
    this.store = store;
    this.mail = mail;
    this.clock = clock;
    this.providers = providers;
    this.options = { ...DEFAULT_ENGINE_OPTIONS, ...options };
    this.winners = new VariantWinners({ store: new StepTestStore(), events });
    const gates = new ContactGates({ events, verified });
    this.previews = new MessagePreview({
      db,
      store,
      previewStore: new PreviewStore(),
      winners: this.winners,
      gates,
      mail,
      suppression,
      clock,
    });
    this.workspaceSettings = new WorkspaceSendingSettings({ db, store, clock, defaults: this.options });
    this.bounces = new BounceProtection({ store, accounts, mail, campaigns, settings: this.workspaceSettings, clock });
    const outcomes = new SendingOutcomes({
      store,
      accounts,
      mail,
      events,
      contacts,
      suppression,
      triggers,
      bounces: this.bounces,
      clock,
    });
    this.claims = new SendingClaims({
      store,
      accounts,
      mail,
      warmup,
      suppression,
      links,
      providers,
      winners: this.winners,
      gates,
      outcomes,
      options: this.options,
    });
    this.handOver = new SmtpHandOver({ db, store, accounts, mail, outcomes, clock, options: this.options });
    this.statuses = new SendingStatusReader({ db, store, mail, clock });
    this.progress = new SequenceProgress({ db, store, contacts, clock });
  }

  /** The worker is stopping: the runs in progress hand nothing more to SMTP. */
  stop(): void {
    for (const run of this.running) run.stopped = true;
  }

  /** Called once per message handed to SMTP, with its outcome, after it is recorded (the composition root counts them for metrics). */
  onOutcome(listener: (outcome: MessageOutcome) => void): void {
    this.handOver.onOutcome(listener);
  }

  /** Worker backlog for metrics: contacts due now. */
  backlog(): Promise<Backlog> {
    return this.store.backlog(this.db, this.clock.now());
  }

  /** One pass of the engine; returns how many messages it handed to SMTP. */
  async runOnce(): Promise<number> {
    const run = { stopped: false };
    this.running.add(run);
    try {
      return await this.pass(run);
    } finally {
      this.running.delete(run);
    }
  }

  private async pass(run: { stopped: boolean }): Promise<number> {
    await this.handOver.settleOwnClaims();
    const now = this.clock.now();
    await this.db.transaction(async (trx) => {
      await this.store.markUnknown(
        trx,
        await this.mail.expireSending(trx, new Date(now.getTime() - this.options.claimLeaseMs)),
        now,
      );
      await this.store.requeue(
        trx,
        await this.mail.dropUnhanded(trx, { before: new Date(now.getTime() - this.options.unhandedLeaseMs) }),
        now,
      );
    });
    await this.store.releaseHeld(this.db, now);
    let sent = 0;
    for (const campaignId of await this.store.campaignsWithDueWork(
      this.db,
      now,
      this.options.campaignsPerRun,
      this.lastCampaign,
    )) {
      if (run.stopped) break;
      this.lastCampaign = campaignId;
      // DNS before the claim's transaction, never inside it.
      await this.providers.refresh(
        (await this.store.addressesToMatch(this.db, campaignId, now, this.options.batchSize)).map(mailDomainOf),
      );
      const claimed = await this.db.transaction((trx) => this.claims.claim(trx, campaignId, now));
      sent += await this.handOver.deliver(claimed, run);
    }
    return sent;
  }

  /**
   * A hard bounce reported after SMTP accepted the message (a delivery status notification the inbox read),
   * in the caller's transaction: the message reads `bounced`, the contact's progress ends, and bounce
   * protection counts it like an SMTP 5xx. The inbox marks the contact, suppresses and records the event.
   */
  recordLateHardBounce(trx: Executor, workspaceId: string, messageId: string): Promise<void> {
    return this.bounces.recordLateHardBounce(trx, workspaceId, messageId);
  }

  /** Why the campaign is (not) sending (GET /v2/campaign/sending-status). */
  sendingStatus(view: Parameters<SendingStatusReader['sendingStatus']>[0]) {
    return this.statuses.sendingStatus(view);
  }

  /** The provider of the address's mailbox as last looked up, or null (GET /v1/contact/get). */
  async recipientProvider(email: string): Promise<MailboxProvider | null> {
    const domain = mailDomainOf(email);
    return (await this.providers.known(this.db, [domain])).get(domain) ?? null;
  }

  /** Known providers of mail domains (the account view's `mailboxProvider` for SMTP accounts). */
  knownProviders(db: Executor, domains: string[]): Promise<Map<string, MailboxProvider>> {
    return this.providers.known(db, domains);
  }

  /** A contact's next message and when it goes (GET /v2/campaign/preview). */
  preview(workspaceId: string, campaign: PreviewedCampaign, contactId: string) {
    return this.previews.preview(workspaceId, campaign, contactId);
  }

  /** Each step's picked A/Z winner (GET /v2/analytics/campaign/steps). */
  stepWinners(campaignId: string): Promise<Map<string, string>> {
    return this.winners.winners(this.db, campaignId);
  }

  /** The workspace's sending settings (GET /v2/sending/settings). */
  settings(workspaceId: string): Promise<SendingSettings> {
    return this.workspaceSettings.read(this.db, workspaceId);
  }

  /** Changes the workspace's sending settings (POST /v2/sending/settings). */
  updateSettings(workspaceId: string, input: Partial<SendingSettings>): Promise<SendingSettings> {
    return this.workspaceSettings.update(workspaceId, input);
  }

  /** Progress rows for contacts that joined an active campaign or became active in one (their add, resume or move transaction). */
  startContacts(trx: Executor, contactIds: string[]): Promise<void> {
    return this.progress.startContacts(trx, contactIds);
  }

  /** Progress rows for the active contacts of a campaign going active (its launch transaction). */
  startCampaign(trx: Executor, campaignId: string): Promise<void> {
    return this.progress.startCampaign(trx, campaignId);
  }

  /** Moves contacts' progress to another campaign (POST /v2/contact/move); returns the contacts past its last step. */
  moveProgress(trx: Executor, contactIds: string[], toCampaignId: string, keepProgress: boolean): Promise<Set<string>> {
    return this.progress.moveProgress(trx, contactIds, toCampaignId, keepProgress);
  }

  // --- subsequences (the campaign module's SubsequenceProgress) ---

  enterSubsequence(
    trx: Executor,
    p: { contactId: string; workspaceId: string; campaignId: string; subsequenceId: string; dueAt: Date },
  ): Promise<{ fromSubsequenceId: string | null }> {
    return this.progress.enterSubsequence(trx, p);
  }

  contactsInSubsequences(db: Executor, subsequenceIds: string[]): Promise<Map<string, number>> {
    return this.progress.contactsInSubsequences(db, subsequenceIds);
  }

  /** The subsequence's unfinished contacts go back to the main sequence, or finish (`none`); answers how many moved. */
  moveOutOfSubsequence(
    trx: Executor,
    workspaceId: string,
    subsequenceId: string,
    to: 'main' | 'none',
  ): Promise<number> {
    return this.progress.moveOutOfSubsequence(trx, workspaceId, subsequenceId, to);
  }

  releaseSubsequence(trx: Executor, subsequenceId: string): Promise<void> {
    return this.progress.releaseSubsequence(trx, subsequenceId);
  }

  /** A contact's place in its sequence, for `GET /v1/contact/get`. */
  contactProgress(contactId: string): Promise<components['schemas']['ContactProgress'] | null> {
    return this.progress.contactProgress(contactId);
  }
}
