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
 */
import { randomInt } from 'node:crypto';
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Backlog } from '../../observability/telemetry';
import type { Db, Executor } from '../../db';
import { newId } from '../../platform/ids';
import type { AccountMailAccess } from '../account';
import type { EventService } from '../events';
import { CONNECTIONS_PER_ACCOUNT, type Composed, type MailService, type MessageRow, type SendOutcome } from '../mail';
import type { SuppressionService } from '../suppression';
import type { SubsequenceTriggers } from '../campaign';
import { renderVariant, templateValues } from './message';
import { nextOpenMoment, startOfLocalDay } from '../../time/schedule';
import { mailDomainOf, type MailboxProvider, type RecipientProviders } from './providers';
import type { DueContact, SendingAccount, SendingCampaign, SendingStep, SendingStore, SubsequenceSteps } from './store';
import { VariantWinners, type ClaimTests } from './winner';
import { StepTestStore } from './winner-store';
import { MessagePreview, type PreviewedCampaign } from './preview';
import { ContactGates, NOT_VERIFIED, VERIFY_RECHECK_MS, type StopReason, type VerifiedAddresses } from './gates';
import { PreviewStore } from './preview-store';

type SendingStatus = components['schemas']['CampaignSendingStatus'];
type SendingReason = components['schemas']['SendingReason'];
type SendingSettings = components['schemas']['SendingSettings'];

/** Why a due contact waits for the next day: its recipient domain had the emails a day its caps allow. */
export const RECIPIENT_DOMAIN_LIMIT = 'recipient_domain_limit';

/** Why a contact is held: its subsequence is paused (resuming it releases the contact). */
export const SUBSEQUENCE_PAUSED = 'subsequence_paused';

/** Why a due contact waits in a strictly provider-matched campaign: no account of its provider has room now. */
export const NO_ACCOUNT_OF_PROVIDER = 'no_account_of_provider';

/** The start of the next local day (a day is 23 to 25 hours long, so 26 hours on is inside the next one). */
const nextLocalDay = (timezone: string, now: Date) =>
  startOfLocalDay(timezone, new Date(startOfLocalDay(timezone, now).getTime() + 26 * 3600_000));

/** Today's campaign mail per recipient domain against the campaign's and the workspace's caps. */
interface DomainRoom {
  /** When a contact of `domain` may go again, or null when it may go now. */
  fullUntil(domain: string): Date | null;
  add(domain: string): void;
}

/** What the engine changes on a contact when its sequence ends (the contact module implements it). */
export interface SendingContacts {
  finishForMail(
    db: Executor,
    workspaceId: string,
    contactId: string,
    status: 'completed' | 'bounced',
  ): Promise<boolean>;
  /** Contacts of the campaign still to be mailed (active or paused). */
  unfinishedInCampaign(db: Executor, campaignId: string): Promise<number>;
}

/** The campaign module's bounce protection: pauses an active campaign with the reason `bounce_rate` and its event. */
export interface CampaignBounces {
  pauseForBounces(db: Executor, workspaceId: string, campaignId: string, message: string): Promise<void>;
}

/** The warm-up pool's emails per account since a time, claims in flight included (they share the daily limit). */
export interface WarmupSends {
  sentSince(db: Executor, accountIds: string[], since: Date): Promise<Map<string, number>>;
}

/** A send's outcome: `deferred` is a failure retried later. */
export type MessageOutcome = 'sent' | 'bounced' | 'unknown' | 'deferred';

/** What the tracking module adds to every campaign message (unsubscribe, pixel, click links). */
export interface MessageLinks {
  linksFor(ref: MessageRef): { unsubscribeUrl: string; listUnsubscribe: string; openPixelUrl: string };
  rewriteLinks(html: string, ref: MessageRef): string;
}

export interface MessageRef {
  workspaceId: string;
  messageId: string;
  contactId: string;
  campaignId: string;
  stepId: string;
  variantId: string;
  accountId: string;
  builtAt: Date;
  /** The verified tracking domain its links use, or null for the default host. */
  trackingHost: string | null;
}

/** Tuning that tests and the benchmark change; the defaults are the documented behaviour. */
export interface EngineOptions {
  /** Contacts claimed per campaign per run. */
  batchSize: number;
  /** Campaigns looked at per run. */
  campaignsPerRun: number;
  /** SMTP sends in flight at once. */
  concurrency: number;
  /** A claim handed to SMTP this long ago without an outcome is `unknown`. */
  claimLeaseMs: number;
  /** A claim never handed to SMTP this long after it was made goes back to the queue (its worker is gone). */
  unhandedLeaseMs: number;
  /**
   * Bounce protection's defaults: more than `bounceRatePercent` hard bounces among the last `bounceWindow`
   * sends pauses the account; a campaign's rule, when a workspace turns it on, counts its last
   * `campaignBounceWindow` sends. A workspace's sending settings and an account's own rule win.
   */
  bounceWindow: number;
  bounceRatePercent: number;
  campaignBounceWindow: number;
  /** Random wait in [0, max] minutes; injectable so tests are exact. */
  random: (maxInclusive: number) => number;
}

export const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  batchSize: 200,
  campaignsPerRun: 20,
  concurrency: 32,
  claimLeaseMs: 10 * 60_000,
  unhandedLeaseMs: 60_000,
  bounceWindow: 40,
  bounceRatePercent: 5,
  campaignBounceWindow: 100,
  random: (max) => (max > 0 ? randomInt(max + 1) : 0),
};

interface Claimed {
  message: MessageRow & { campaign_id: string; contact_id: string; account_id: string; step_number: number };
  composed: Composed;
  lastStep: boolean;
  nextDelayMinutes: number;
  email: string;
  /** The subsequence the step belongs to (null: the main sequence). */
  subsequenceId: string | null;
}

const MINUTE = 60_000;
/** Retry waits after transient failures: 5 min doubling, at most 6 hours. */
const retryDelay = (attempts: number) => Math.min(5 * MINUTE * 2 ** attempts, 6 * 60 * MINUTE);

/** The account has room today and its gap since the last send has passed. */
const canSend = (a: SendingAccount, now: Date) => a.sent_today < a.daily_limit && a.next_send_at <= now;

/** Sends in flight per account: the pooled transport's connections, so a message handed over is on the wire. */
const SENDS_PER_ACCOUNT = CONNECTIONS_PER_ACCOUNT;

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
  private readonly options: EngineOptions;
  /** Claims this process never handed to SMTP because the database went away: released once it answers. */
  private readonly unhanded = new Set<string>();
  /** SMTP outcomes this process could not record (database away): recorded once it answers. */
  private readonly unrecorded: { item: Claimed; outcome: SendOutcome }[] = [];
  /** Runs in progress; stop() marks them: nothing more is handed to SMTP, and their remaining claims are released. */
  private readonly running = new Set<{ stopped: boolean }>();
  /** The last campaign this process looked at: the next run starts after it. */
  private lastCampaign: string | null = null;
  private readonly winners: VariantWinners;
  private readonly previews: MessagePreview;
  private readonly gates: ContactGates;

  private readonly db: Db;
  private readonly store: SendingStore;
  private readonly accounts: AccountMailAccess;
  private readonly contacts: SendingContacts;
  private readonly events: EventService;
  private readonly suppression: SuppressionService;
  private readonly links: MessageLinks;
  private readonly mail: MailService;
  private readonly warmup: WarmupSends;
  private readonly clock: Clock;
  private readonly providers: RecipientProviders;
  private readonly campaigns: CampaignBounces;
  private readonly triggers: SubsequenceTriggers;

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
    this.accounts = accounts;
    this.contacts = contacts;
    this.events = events;
    this.suppression = suppression;
    this.links = links;
    this.mail = mail;
    this.warmup = warmup;
    this.clock = clock;
    this.providers = providers;
    this.campaigns = campaigns;
    this.triggers = triggers;

    this.options = { ...DEFAULT_ENGINE_OPTIONS, ...options };
    this.winners = new VariantWinners({ store: new StepTestStore(), events });
    this.gates = new ContactGates({ events, verified });
    this.previews = new MessagePreview({
      db,
      store,
      previewStore: new PreviewStore(),
      winners: this.winners,
      gates: this.gates,
      mail,
      suppression,
      clock,
    });
  }

  /** The worker is stopping: the runs in progress hand nothing more to SMTP. */
  stop(): void {
    for (const run of this.running) run.stopped = true;
  }

  private readonly outcomeListeners: ((outcome: MessageOutcome) => void)[] = [];

  /** Called once per message handed to SMTP, with its outcome, after it is recorded (the composition root counts them for metrics). */
  onOutcome(listener: (outcome: MessageOutcome) => void): void {
    this.outcomeListeners.push(listener);
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
    await this.settleOwnClaims();
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
      const claimed = await this.db.transaction((trx) => this.claim(trx, campaignId, now));
      sent += await this.deliver(claimed, run);
    }
    return sent;
  }

  private reportOutcome(outcome: SendOutcome): void {
    const reported: MessageOutcome =
      outcome.kind === 'sent' || outcome.kind === 'bounced' || outcome.kind === 'unknown' ? outcome.kind : 'deferred';
    for (const listener of this.outcomeListeners) listener(reported);
  }

  /** Throws while the database is still away; the worker tries again at its next tick. */
  private async settleOwnClaims(): Promise<void> {
    while (this.unrecorded.length > 0) {
      const { item, outcome } = this.unrecorded[0];
      await this.db.transaction((trx) => this.record(trx, item, outcome));
      this.unrecorded.shift();
      this.reportOutcome(outcome);
    }
    if (this.unhanded.size > 0) {
      const ids = [...this.unhanded];
      await this.db.transaction(async (trx) =>
        this.store.requeue(trx, await this.mail.dropUnhanded(trx, { ids }), this.clock.now()),
      );
      this.unhanded.clear();
    }
  }

  private async claim(trx: Executor, campaignId: string, now: Date): Promise<Claimed[]> {
    const campaign = await this.store.lockActiveCampaign(trx, campaignId);
    if (!campaign?.schedule) return [];
    // Outside the schedule nothing is claimed; the due rows keep their times (the status shows the next open moment).
    // Sending in the leads' zones, each contact's own hours are checked below instead.
    const open = nextOpenMoment(campaign.schedule, now);
    if (!open || (open > now && !campaign.send_in_lead_timezone)) return [];
    const locked = await this.store.lockSendingAccounts(trx, campaignId, now);
    // Every account in its gap (the usual state between sends): nothing can go out, whatever was sent today, so
    // nothing else is read (a busy run stays cheap).
    if (!locked.some((a) => a.next_send_at <= now)) return [];
    const steps = await this.store.steps(trx, campaignId);
    const campaignDay = await this.mail.campaignSentSince(
      trx,
      campaignId,
      startOfLocalDay(campaign.schedule.timezone, now),
    );
    let campaignLeft = campaign.daily_limit === null ? Infinity : campaign.daily_limit - campaignDay.all;
    let newLeft = campaign.daily_new_contacts === null ? Infinity : campaign.daily_new_contacts - campaignDay.first;
    if (campaignLeft <= 0) return [];
    const dayStart = startOfLocalDay(campaign.workspace_timezone, now);
    const ids = locked.map((a) => a.id);
    // Warm-up and placement-test mail share the account's daily limit with campaigns: counted and claimed under
    // the accounts' send lock, which the warm-up sender takes too, so neither takes the last of the day twice.
    await this.accounts.lockForSending(trx, ids);
    const [sentToday, warmupToday] = [
      await this.mail.sentSinceByAccount(trx, ids, ['campaign', 'placement'], dayStart),
      await this.warmup.sentSince(trx, ids, dayStart),
    ];
    const accounts: SendingAccount[] = locked.map((a) => ({
      ...a,
      sent_today: (sentToday.get(a.id) ?? 0) + (warmupToday.get(a.id) ?? 0),
    }));
    // Every account at its daily limit or in its gap: no due contact is read.
    if (!accounts.some((a) => canSend(a, now))) return [];
    const claimed: Claimed[] = [];
    const tests = await this.winners.forClaim(trx, campaign, steps, now);
    const due = await this.store.dueContacts(trx, campaignId, now, this.options.batchSize, campaign.send_priority);
    const gates = await this.gates.read(trx, campaign, due);
    const suppressed = await this.suppression.filterSuppressed(
      trx,
      campaign.workspace_id,
      due.map((c) => c.email),
    );
    const domainRoom = await this.domainRoom(trx, campaign, campaign.schedule.timezone, due, now);
    // A straight-line campaign never reads subsequences.
    const subsequences: SubsequenceSteps = due.some((c) => c.subsequence_id)
      ? await this.store.subsequenceSteps(trx, campaignId)
      : new Map<string, { status: string; steps: SendingStep[] }>();
    const providers = campaign.match_provider
      ? await this.providers.known(trx, [...due.map((c) => c.email), ...accounts.map((a) => a.email)].map(mailDomainOf))
      : null;
    const mailboxOf = (a: SendingAccount): MailboxProvider | null =>
      a.provider === 'smtp' ? (providers?.get(mailDomainOf(a.email)) ?? null) : a.provider;
    for (const contact of due) {
      if (campaignLeft <= 0) break;
      if (suppressed.has(contact.email.toLowerCase())) {
        await this.store.updateProgress(trx, contact.contact_id, {
          state: 'done',
          reason: 'suppressed',
          updated_at: now,
        });
        continue;
      }
      const sequence = contact.subsequence_id ? subsequences.get(contact.subsequence_id) : { status: 'active', steps };
      if (sequence?.status === 'paused') {
        await this.store.updateProgress(trx, contact.contact_id, {
          state: 'held',
          reason: SUBSEQUENCE_PAUSED,
          updated_at: now,
        });
        continue;
      }
      const sequenceSteps = sequence?.steps ?? [];
      const step = sequenceSteps[contact.step_number - 1];
      if (!step || step.variants.length === 0) {
        await this.store.updateProgress(trx, contact.contact_id, {
          state: 'done',
          reason: 'no_more_steps',
          updated_at: now,
        });
        continue;
      }
      const stop = gates.stopped(contact);
      if (stop) {
        await this.stopContact(trx, campaign, contact.contact_id, stop, now);
        continue;
      }
      if (gates.unverified(contact)) {
        await this.store.updateProgress(trx, contact.contact_id, {
          due_at: new Date(now.getTime() + VERIFY_RECHECK_MS),
          reason: NOT_VERIFIED,
          updated_at: now,
        });
        continue;
      }
      const firstEmail = contact.step_number === 1 && !contact.subsequence_id;
      if (firstEmail && newLeft <= 0) continue;
      if (campaign.send_in_lead_timezone) {
        const local =
          contact.timezone && contact.timezone !== campaign.schedule.timezone
            ? nextOpenMoment({ ...campaign.schedule, timezone: contact.timezone }, now)
            : open;
        if (!local) continue;
        if (local > now) {
          // Due again when the lead's day opens, so it is not read on every pass until then.
          await this.store.updateProgress(trx, contact.contact_id, {
            due_at: local,
            reason: 'outside_lead_hours',
            updated_at: now,
          });
          continue;
        }
      }
      const domain = mailDomainOf(contact.email);
      const resumeAt = domainRoom?.fullUntil(domain);
      if (resumeAt) {
        await this.store.updateProgress(trx, contact.contact_id, {
          state: 'waiting',
          reason: RECIPIENT_DOMAIN_LIMIT,
          due_at: resumeAt,
          updated_at: now,
        });
        continue;
      }
      const want = providers?.get(domain) ?? null;
      // An account of the recipient's provider first; then, unless the match is strict, any account.
      const strict = want !== null && campaign.match_provider_strict;
      const account =
        (want && this.chooseAccount(accounts, contact, now, { want, of: mailboxOf })) ||
        (strict ? undefined : this.chooseAccount(accounts, contact, now));
      if (!account) {
        if (strict && !contact.account_id && contact.reason !== NO_ACCOUNT_OF_PROVIDER)
          await this.store.updateProgress(trx, contact.contact_id, { reason: NO_ACCOUNT_OF_PROVIDER, updated_at: now });
        continue;
      }
      const built = await this.build(trx, campaign, sequenceSteps, step, contact, account, tests, now);
      if (!built) continue;
      domainRoom?.add(domain);
      claimed.push(built);
      campaignLeft -= 1;
      if (firstEmail) newLeft -= 1;
      account.sent_today += 1;
      const waitMinutes = campaign.email_gap_minutes + this.options.random(campaign.random_wait_max_minutes);
      account.next_send_at = new Date(now.getTime() + waitMinutes * MINUTE);
      await this.store.setAccountPace(trx, account.id, { next_send_at: account.next_send_at });
    }
    return claimed;
  }

  /**
   * The caps per recipient domain, when the campaign or its workspace has one: today's mail to the due
   * contacts' domains, from the campaign (in its schedule's day) and from the workspace (in its own day). With
   * a workspace cap, the claims of the workspace's campaigns take turns, so two cannot both use its last room.
   */
  private async domainRoom(
    trx: Executor,
    campaign: SendingCampaign,
    scheduleTimezone: string,
    due: DueContact[],
    now: Date,
  ): Promise<DomainRoom | null> {
    const caps = [
      { cap: campaign.recipient_domain_daily_limit, timezone: scheduleTimezone, campaignId: campaign.id },
      { cap: campaign.workspace_recipient_domain_daily_limit, timezone: campaign.workspace_timezone },
    ].filter((c): c is typeof c & { cap: number } => c.cap !== null);
    if (caps.length === 0 || due.length === 0) return null;
    if (campaign.workspace_recipient_domain_daily_limit !== null)
      await this.store.lockRecipientDomains(trx, campaign.workspace_id);
    const domains = [...new Set(due.map((c) => mailDomainOf(c.email)))];
    const counted: { cap: number; sent: Map<string, number>; until: Date }[] = [];
    for (const c of caps) {
      const sent = await this.mail.sentToDomainsSince(
        trx,
        { workspaceId: campaign.workspace_id, campaignId: c.campaignId },
        domains,
        startOfLocalDay(c.timezone, now),
      );
      counted.push({ cap: c.cap, sent, until: nextLocalDay(c.timezone, now) });
    }
    return {
      fullUntil: (domain) =>
        counted
          .filter((c) => (c.sent.get(domain) ?? 0) >= c.cap)
          .reduce<Date | null>((latest, c) => (latest && latest > c.until ? latest : c.until), null),
      add: (domain) => {
        for (const c of counted) c.sent.set(domain, (c.sent.get(domain) ?? 0) + 1);
      },
    };
  }

  /**
   * The contact's own account when it can send now; a contact whose account was unlinked or stopped moves
   * to the free account with the most capacity left today (which spreads contacts evenly). With `match`, only
   * accounts whose mailbox provider is the one wanted are candidates.
   */
  private chooseAccount(
    accounts: SendingAccount[],
    contact: DueContact,
    now: Date,
    match?: { want: MailboxProvider; of: (a: SendingAccount) => MailboxProvider | null },
  ): SendingAccount | undefined {
    const own = contact.account_id ? accounts.find((a) => a.id === contact.account_id) : undefined;
    if (own) return canSend(own, now) ? own : undefined;
    return accounts
      .filter((a) => canSend(a, now) && (!match || match.of(a) === match.want))
      .sort((a, b) => b.daily_limit - b.sent_today - (a.daily_limit - a.sent_today) || a.id.localeCompare(b.id))[0];
  }

  private async build(
    trx: Executor,
    campaign: SendingCampaign,
    steps: SendingStep[],
    step: SendingStep,
    contact: DueContact,
    account: SendingAccount,
    tests: ClaimTests,
    now: Date,
  ): Promise<Claimed | null> {
    const variant = await tests.variantFor(trx, step, contact.contact_id);
    const id = newId();
    const ref: MessageRef = {
      workspaceId: campaign.workspace_id,
      messageId: id,
      contactId: contact.contact_id,
      campaignId: campaign.id,
      stepId: step.id,
      variantId: variant.id,
      accountId: account.id,
      builtAt: now,
      // The account's domain first: it can match the sender's own domain, which the campaign's cannot for every account.
      trackingHost: account.tracking_host ?? campaign.tracking_host,
    };
    const links = this.links.linksFor(ref);
    const values = { ...templateValues(contact), unsubscribeUrl: links.unsubscribeUrl };
    const previous = contact.last_message_id ? await this.mail.threadParent(trx, contact.last_message_id) : undefined;
    // A step without a subject answers the previous one, in its thread.
    const parent = variant.subject.trim() === '' ? previous : undefined;
    const rendered = renderVariant(variant, { contactId: contact.contact_id, stepId: step.id }, values, !!parent);
    if (!rendered.ok) {
      await this.store.updateProgress(trx, contact.contact_id, {
        state: 'held',
        reason: `missing_variable:${rendered.missing}`,
        updated_at: now,
      });
      return null;
    }
    let html: string | undefined;
    if (
      !campaign.text_only &&
      !(campaign.first_email_text_only && contact.step_number === 1 && !contact.subsequence_id)
    ) {
      html = rendered.body.html;
      if (campaign.track_clicks) html = this.links.rewriteLinks(html, ref);
      if (campaign.track_opens)
        html += `<img src="${links.openPixelUrl}" width="1" height="1" alt="" style="display:none">`;
    }
    const composed = this.mail.compose({
      id,
      from: account.email,
      to: contact.email,
      cc: campaign.copy_to.cc,
      bcc: campaign.copy_to.bcc,
      subject: rendered.subject,
      text: rendered.body.text,
      html,
      parent,
      headers: { 'List-Unsubscribe': links.listUnsubscribe, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      date: now,
    });
    const message = await this.mail.recordOutbound(trx, composed, {
      workspaceId: campaign.workspace_id,
      accountId: account.id,
      kind: 'campaign',
      campaignId: campaign.id,
      contactId: contact.contact_id,
      stepId: step.id,
      variantId: variant.id,
      // Only the main sequence's first step counts as a new contact's (dailyNewContacts).
      stepNumber: contact.subsequence_id ? null : contact.step_number,
    });
    // last_message_id moves when the message is known to have gone (record): a released claim leaves the thread as it was.
    await this.store.updateProgress(trx, contact.contact_id, {
      state: 'sending',
      account_id: account.id,
      reason: null,
      updated_at: now,
    });
    const next = steps[contact.step_number];
    return {
      message: {
        ...message,
        campaign_id: campaign.id,
        contact_id: contact.contact_id,
        account_id: account.id,
        step_number: contact.step_number,
      },
      composed,
      email: contact.email,
      lastStep: next === undefined,
      nextDelayMinutes: next?.delay_minutes ?? 0,
      subsequenceId: contact.subsequence_id,
    };
  }

  /**
   * Sends each claim, at most SENDS_PER_ACCOUNT at once per account and `concurrency` in all. Once the
   * database fails, nothing more is handed over in this run: unsent claims and unrecorded outcomes are
   * kept for settleOwnClaims.
   */
  private async deliver(claimed: Claimed[], run: { stopped: boolean }): Promise<number> {
    let sent = 0;
    let databaseLost = false;
    // One login look-up (and decryption) per account per run, not per message.
    const logins = new Map<string, ReturnType<AccountMailAccess['smtpLogin']>>();
    const loginFor = (m: Claimed['message']) => {
      if (!logins.has(m.account_id))
        logins.set(m.account_id, this.accounts.smtpLogin(this.db, m.workspace_id, m.account_id));
      return logins.get(m.account_id)!;
    };
    // Accounts whose server did not take a session in this run: their other claims are not tried again now.
    const unreachable = new Map<string, SendOutcome>();
    const sendOne = async (item: Claimed) => {
      let login: Awaited<ReturnType<AccountMailAccess['smtpLogin']>>;
      try {
        if (databaseLost || run.stopped)
          throw new Error('not handed over: the database failed earlier in this run, or the worker is stopping');
        login = await loginFor(item.message);
        if (!(await this.mail.handOver(this.db, item.message.id))) return;
      } catch {
        if (!run.stopped) databaseLost = true;
        this.unhanded.add(item.message.id);
        return;
      }
      const outcome: SendOutcome =
        unreachable.get(item.message.account_id) ??
        (login
          ? await this.mail.transmit(login, item.composed.message)
          : { kind: 'accountFailure', response: 'no_smtp_login: the account has no SMTP login' });
      if (outcome.kind === 'transient' && outcome.scope === 'server') unreachable.set(item.message.account_id, outcome);
      if (outcome.kind === 'sent') sent += 1;
      try {
        await this.db.transaction((trx) => this.record(trx, item, outcome));
        this.reportOutcome(outcome);
      } catch {
        databaseLost = true;
        this.unrecorded.push({ item, outcome });
      }
    };
    const queues = new Map<string, Claimed[]>();
    for (const item of claimed)
      queues.set(item.message.account_id, [...(queues.get(item.message.account_id) ?? []), item]);
    const busy = new Map<string, number>();
    const take = (): Claimed | undefined => {
      for (const [accountId, queue] of queues) {
        if (queue.length > 0 && (busy.get(accountId) ?? 0) < SENDS_PER_ACCOUNT) {
          busy.set(accountId, (busy.get(accountId) ?? 0) + 1);
          return queue.shift();
        }
      }
      return undefined;
    };
    // A lane that finds every remaining account busy ends: each such account has a lane that drains it.
    const lane = async () => {
      for (let item = take(); item; item = take()) {
        await sendOne(item);
        busy.set(item.message.account_id, busy.get(item.message.account_id)! - 1);
      }
    };
    const lanes = [...queues.values()].reduce((n, q) => n + Math.min(SENDS_PER_ACCOUNT, q.length), 0);
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, lanes) }, lane));
    if (!databaseLost && this.unhanded.size > 0) await this.settleOwnClaims();
    if (this.unhanded.size + this.unrecorded.length > 0)
      throw new Error(
        `the database failed while sending: ${this.unhanded.size} claims kept to release, ${this.unrecorded.length} outcomes to record`,
      );
    return sent;
  }

  /** The outcome of one send, with its event, in one transaction. */
  private async record(trx: Executor, item: Claimed, outcome: SendOutcome): Promise<void> {
    const now = this.clock.now();
    const m = item.message;
    const mail = {
      campaignId: m.campaign_id,
      stepId: m.step_id,
      variantId: m.variant_id,
      accountId: m.account_id,
      contactId: m.contact_id,
      messageId: m.id,
    };
    const data = { ...mail, email: item.email };
    // Outcomes that may finish the campaign take its lock first (the claim's order: campaign, then accounts),
    // so two workers finishing its last contacts cannot both miss, or both record, the completion.
    const campaign =
      item.lastStep || outcome.kind === 'bounced' ? await this.store.lockCampaign(trx, m.campaign_id) : undefined;
    // A claim that expired meanwhile was reported `unknown` already; its outcome arrives too late to count.
    if (!(await this.mail.finish(trx, m.id, 'campaign', outcome))) return;

    if (outcome.kind === 'sent') {
      await this.accounts.connectionWorks(trx, m.account_id, 'smtp');
      await this.events.record(trx, { workspaceId: m.workspace_id, type: 'email.sent', occurredAt: now, data, mail });
      const sent = { last_message_id: m.id, last_sent_at: now, attempts: 0, updated_at: now };
      const next = item.lastStep
        ? { ...sent, state: 'done' as const, step_number: m.step_number + 1 }
        : {
            ...sent,
            state: 'waiting' as const,
            step_number: m.step_number + 1,
            due_at: new Date(now.getTime() + item.nextDelayMinutes * MINUTE),
          };
      // A trigger may have moved the contact into a subsequence while this was on the wire: it keeps its new place
      // (this message still starts its thread).
      if (!(await this.store.updateProgressIn(trx, m.contact_id, item.subsequenceId, next))) {
        await this.store.updateProgress(trx, m.contact_id, sent);
        return;
      }
      if (!item.lastStep) return;
      // The main sequence sent without a reply so far: a `noReply` subsequence takes the contact instead of finishing.
      if (
        item.subsequenceId === null &&
        (await this.triggers.fire(trx, {
          type: 'noReply',
          workspaceId: m.workspace_id,
          campaignId: m.campaign_id,
          contactId: m.contact_id,
        }))
      )
        return;
      await this.contacts.finishForMail(trx, m.workspace_id, m.contact_id, 'completed');
      await this.completeIfFinished(trx, m.workspace_id, m.campaign_id, campaign?.name ?? '', now);
      return;
    }
    if (outcome.kind === 'bounced') {
      await this.store.updateProgress(trx, m.contact_id, {
        state: 'done',
        reason: 'bounced',
        last_message_id: m.id,
        updated_at: now,
      });
      await this.contacts.finishForMail(trx, m.workspace_id, m.contact_id, 'bounced');
      await this.suppression.suppress(trx, m.workspace_id, [{ value: item.email, reason: 'bounced' }]);
      await this.events.record(trx, {
        workspaceId: m.workspace_id,
        type: 'email.bounced',
        occurredAt: now,
        data: { ...data, bounceType: 'hard', smtpResponse: outcome.response },
        mail,
      });
      await this.protectFromBounces(trx, m.workspace_id, m.account_id, m.campaign_id);
      await this.completeIfFinished(trx, m.workspace_id, m.campaign_id, campaign?.name ?? '', now);
      return;
    }
    if (outcome.kind === 'unknown') {
      await this.store.updateProgress(trx, m.contact_id, {
        state: 'unknown',
        reason: 'unknown_outcome',
        last_message_id: m.id,
        updated_at: now,
      });
      return;
    }
    const reason = `smtp_failed: ${outcome.response}`.slice(0, 500);
    // The account's server did not take the session (refused, timed out, a 4xx greeting): time fixes that, not
    // a person. The account keeps its status and sends nothing until its next try; the contact is not at
    // fault, so it waits for that try (another account of the campaign may take a first step meanwhile).
    if (outcome.kind === 'transient' && outcome.scope === 'server') {
      const retry = await this.accounts.connectionFailed(trx, m.account_id, 'smtp', outcome.response);
      await this.store.setAccountPace(trx, m.account_id, { next_send_at: retry.nextTryAt });
      await this.store.updateProgress(trx, m.contact_id, {
        state: 'waiting',
        due_at: m.step_number === 1 ? now : retry.nextTryAt,
        reason,
        account_id: m.step_number === 1 ? null : m.account_id,
        updated_at: now,
      });
      return;
    }
    // Not sent: the contact waits for a retry; a refused login also moves it off this account.
    const progress = await this.store.progressOf(trx, m.contact_id);
    const attempts = (progress?.attempts ?? 0) + 1;
    await this.store.updateProgress(trx, m.contact_id, {
      state: 'waiting',
      attempts,
      due_at: new Date(now.getTime() + retryDelay(attempts - 1)),
      reason,
      account_id: outcome.kind === 'accountFailure' && m.step_number === 1 ? null : m.account_id,
      updated_at: now,
    });
    if (outcome.kind === 'accountFailure')
      await this.changeAccountStatus(trx, m.account_id, 'connectionError', outcome.response);
  }

  private async changeAccountStatus(
    trx: Executor,
    accountId: string,
    status: 'connectionError' | 'paused',
    reason: string,
  ): Promise<void> {
    await this.accounts.changeStatus(trx, accountId, status, reason);
  }

  /**
   * A hard bounce reported after SMTP accepted the message (a delivery status notification the inbox read),
   * in the caller's transaction: the message reads `bounced`, the contact's progress ends, and bounce
   * protection counts it like an SMTP 5xx. The inbox marks the contact, suppresses and records the event.
   */
  async recordLateHardBounce(trx: Executor, workspaceId: string, messageId: string): Promise<void> {
    const message = await this.mail.markLateBounce(trx, messageId);
    if (!message) return;
    if (message.contact_id)
      await this.store.updateProgress(trx, message.contact_id, {
        state: 'done',
        reason: 'bounced',
        updated_at: this.clock.now(),
      });
    if (message.account_id && message.kind === 'campaign')
      await this.protectFromBounces(trx, workspaceId, message.account_id, message.campaign_id);
  }

  /**
   * Bounce protection after a hard bounce: an account whose recent hard-bounce rate passes its threshold is
   * paused before it harms its domain, and, when the workspace turned the campaign rule on, so is a campaign
   * whose recent rate passes the campaign threshold. Each pause carries its reason and event.
   */
  private async protectFromBounces(
    trx: Executor,
    workspaceId: string,
    accountId: string,
    campaignId: string | null,
  ): Promise<void> {
    const settings = await this.settingsIn(trx, workspaceId);
    const own = await this.accounts.bounceRule(trx, accountId);
    const window = own.window ?? settings.bounceWindow;
    const rate = own.ratePercent ?? settings.bounceRatePercent;
    const account = await this.mail.recentOutcomes(trx, accountId, window);
    if (tripped(account, window, rate))
      await this.changeAccountStatus(
        trx,
        accountId,
        'paused',
        `bounce_rate: ${account.bounced} hard bounces in the last ${account.total} sends (more than ${rate}%)`,
      );
    if (campaignId === null || settings.campaignBounceRatePercent === null) return;
    const campaign = await this.mail.recentCampaignOutcomes(trx, campaignId, settings.campaignBounceWindow);
    if (tripped(campaign, settings.campaignBounceWindow, settings.campaignBounceRatePercent))
      await this.campaigns.pauseForBounces(
        trx,
        workspaceId,
        campaignId,
        `${campaign.bounced} hard bounces in the last ${campaign.total} sends (more than ${settings.campaignBounceRatePercent}%).`,
      );
  }

  /** Ends a contact's sequence for `stopOnOpen` / `stopOnClick` (in the claim, which holds the campaign lock). */
  private async stopContact(
    trx: Executor,
    campaign: SendingCampaign,
    contactId: string,
    reason: StopReason,
    now: Date,
  ): Promise<void> {
    await this.store.updateProgress(trx, contactId, { state: 'done', reason, updated_at: now });
    await this.contacts.finishForMail(trx, campaign.workspace_id, contactId, 'completed');
    await this.completeIfFinished(trx, campaign.workspace_id, campaign.id, campaign.name, now);
  }

  /** Records `campaign.completed` when no contact is left to mail (the caller holds the campaign lock). */
  private async completeIfFinished(
    trx: Executor,
    workspaceId: string,
    campaignId: string,
    name: string,
    now: Date,
  ): Promise<void> {
    if ((await this.contacts.unfinishedInCampaign(trx, campaignId)) > 0) return;
    await this.events.record(trx, {
      workspaceId,
      type: 'campaign.completed',
      occurredAt: now,
      data: { campaignId, name },
    });
  }

  // --- why is it (not) sending ---

  async sendingStatus(
    workspaceId: string,
    view: {
      id: string;
      status: SendingStatus['status'];
      schedule: SendingCampaign['schedule'];
      dailyLimit: number | null;
      sendableAccounts: number | null;
      sendInLeadTimezone: boolean;
    },
  ): Promise<SendingStatus> {
    const campaignId = view.id;
    const now = this.clock.now();
    const db = this.db;
    const [progress, contacts, perStep, steps, nextDue, held, waitingForLeads] = await Promise.all([
      this.store.progressCounts(db, campaignId, now),
      this.store.contactCounts(db, campaignId),
      this.mail.sentPerStep(db, campaignId),
      this.store.steps(db, campaignId),
      this.store.nextDue(db, campaignId),
      this.store.heldReasons(db, campaignId),
      view.sendInLeadTimezone ? this.store.waitingFor(db, campaignId, 'outside_lead_hours') : false,
    ]);
    const counts = {
      notStarted: 0,
      waiting: 0,
      due: 0,
      sending: 0,
      held: 0,
      unknown: 0,
      completed: 0,
      bounced: 0,
      unsubscribed: 0,
      paused: 0,
    };
    for (const c of contacts) {
      if (c.status === 'completed' || c.status === 'bounced' || c.status === 'unsubscribed' || c.status === 'paused')
        counts[c.status] += c.n;
      else if (!c.started) counts.notStarted += c.n;
    }
    for (const p of progress) {
      if (p.state === 'waiting') counts[p.due ? 'due' : 'waiting'] += p.n;
      else if (p.state === 'sending' || p.state === 'held' || p.state === 'unknown') counts[p.state] += p.n;
    }
    const reasons: SendingReason[] = [];
    const total = contacts.reduce((n, c) => n + c.n, 0);
    if (view.status === 'draft') reasons.push('not_launched');
    if (view.status === 'paused') reasons.push('paused');
    if (view.status === 'completed') reasons.push('completed');
    if (total === 0) reasons.push('no_contacts');
    if (!view.schedule) reasons.push('no_schedule');
    const open = view.schedule ? nextOpenMoment(view.schedule, now) : null;
    if (view.schedule && !open) reasons.push('schedule_ended');
    else if (open && open > now && !view.sendInLeadTimezone) reasons.push('outside_schedule');
    if (waitingForLeads) reasons.push('outside_lead_hours');
    if (view.sendableAccounts === 0) reasons.push('no_sendable_account');
    if (held.length) reasons.push('contacts_held');
    if (await this.store.waitsFor(db, campaignId, RECIPIENT_DOMAIN_LIMIT)) reasons.push('recipient_domain_limit');
    if (await this.store.waitsFor(db, campaignId, NOT_VERIFIED)) reasons.push('not_verified');
    if (
      view.status === 'active' &&
      open &&
      open <= now &&
      counts.due > 0 &&
      view.dailyLimit !== null &&
      view.schedule
    ) {
      const day = await this.mail.campaignSentSince(db, campaignId, startOfLocalDay(view.schedule.timezone, now));
      if (day.all >= view.dailyLimit) reasons.push('daily_limit_reached');
    }
    let nextSendAt: Date | null = null;
    // In the leads' zones a waiting contact's due time is already its own next open moment.
    const gate = view.sendInLeadTimezone && open ? now : open;
    if (view.status === 'active' && gate && nextDue) nextSendAt = nextDue > gate ? nextDue : gate;
    if (view.status === 'active' && gate && counts.notStarted > 0)
      nextSendAt = nextSendAt && nextSendAt < gate ? nextSendAt : gate;
    return {
      campaignId,
      status: view.status,
      counts,
      sentPerStep: steps.map((s, i) => ({ stepId: s.id, order: i + 1, sent: perStep.get(s.id) ?? 0 })),
      nextSendAt: nextSendAt ? (nextSendAt < now ? now : nextSendAt).toISOString() : null,
      reasons,
      heldReasons: held,
    };
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
    return this.settingsIn(this.db, workspaceId);
  }

  /** The workspace's sending settings, the defaults filled in. */
  private async settingsIn(db: Executor, workspaceId: string): Promise<SendingSettings> {
    const row = await this.store.settings(db, workspaceId);
    return {
      recipientDomainDailyLimit: row?.recipient_domain_daily_limit ?? null,
      bounceRatePercent: row?.bounce_rate_percent ?? this.options.bounceRatePercent,
      bounceWindow: row?.bounce_window ?? this.options.bounceWindow,
      campaignBounceRatePercent: row?.campaign_bounce_rate_percent ?? null,
      campaignBounceWindow: row?.campaign_bounce_window ?? this.options.campaignBounceWindow,
    };
  }

  async updateSettings(workspaceId: string, input: Partial<SendingSettings>): Promise<SendingSettings> {
    return this.db.transaction(async (trx) => {
      const next = { ...(await this.settingsIn(trx, workspaceId)), ...input };
      await this.store.saveSettings(trx, {
        workspace_id: workspaceId,
        recipient_domain_daily_limit: next.recipientDomainDailyLimit,
        bounce_rate_percent: next.bounceRatePercent,
        bounce_window: next.bounceWindow,
        campaign_bounce_rate_percent: next.campaignBounceRatePercent,
        campaign_bounce_window: next.campaignBounceWindow,
        updated_at: this.clock.now(),
      });
      return next;
    });
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

/** More than `ratePercent` of the last `window` sends hard-bounced (never before `window` sends). */
function tripped(recent: { total: number; bounced: number }, window: number, ratePercent: number): boolean {
  return recent.total >= window && recent.bounced * 100 > recent.total * ratePercent;
}
