/**
 * The claim: per campaign, in one short transaction, the schedule, the accounts' pace and daily room, the
 * gates and caps each due contact passes, the variant and account it gets, and its message rendered and
 * stored as `sending` before any network I/O. A (contact, step) is claimed by one transaction only.
 */
import type { Executor } from '../../db';
import { newId } from '../../platform/ids';
import type { AccountMailAccess } from '../account';
import type { MailService } from '../mail';
import type { SuppressionService } from '../suppression';
import { nextOpenMoment, startOfLocalDay } from '../../time/schedule';
import { renderVariant, templateValues } from './message';
import { mailDomainOf, type MailboxProvider, type RecipientProviders } from './providers';
import type { DueContact, SendingAccount, SendingCampaign, SendingStep, SendingStore, SubsequenceSteps } from './store';
import type { ClaimTests, VariantWinners } from './winner';
import { NOT_VERIFIED, VERIFY_RECHECK_MS, type ContactGates } from './gates';
import { MINUTE, type EngineOptions } from './options';
import type { Claimed, SendingOutcomes } from './outcome';

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

/** The warm-up pool's emails per account since a time, claims in flight included (they share the daily limit). */
export interface WarmupSends {
  sentSince(db: Executor, accountIds: string[], since: Date): Promise<Map<string, number>>;
}

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

/** The account has room today and its gap since the last send has passed. */
const canSend = (a: SendingAccount, now: Date) => a.sent_today < a.daily_limit && a.next_send_at <= now;

/** What SendingClaims is built from, by name. */
interface SendingClaimsDeps {
  store: SendingStore;
  accounts: AccountMailAccess;
  mail: MailService;
  warmup: WarmupSends;
  suppression: SuppressionService;
  links: MessageLinks;
  providers: RecipientProviders;
  winners: VariantWinners;
  gates: ContactGates;
  /** Ends the sequences of contacts a gate stops. */
  outcomes: SendingOutcomes;
  options: EngineOptions;
}

/** Claims due contacts of one campaign and builds their messages. */
export class SendingClaims {
  private readonly store: SendingStore;
  private readonly accounts: AccountMailAccess;
  private readonly mail: MailService;
  private readonly warmup: WarmupSends;
  private readonly suppression: SuppressionService;
  private readonly links: MessageLinks;
  private readonly providers: RecipientProviders;
  private readonly winners: VariantWinners;
  private readonly gates: ContactGates;
  private readonly outcomes: SendingOutcomes;
  private readonly options: EngineOptions;

  constructor({
    store,
    accounts,
    mail,
    warmup,
    suppression,
    links,
    providers,
    winners,
    gates,
    outcomes,
    options,
  }: SendingClaimsDeps) {
    this.store = store;
    this.accounts = accounts;
    this.mail = mail;
    this.warmup = warmup;
    this.suppression = suppression;
    this.links = links;
    this.providers = providers;
    this.winners = winners;
    this.gates = gates;
    this.outcomes = outcomes;
    this.options = options;
  }

  async claim(trx: Executor, campaignId: string, now: Date): Promise<Claimed[]> {
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
        await this.outcomes.stopContact(trx, campaign, contact.contact_id, stop, now);
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
}
