/**
 * A send's outcome, with its event, in one transaction: the contact's progress moves on, waits for a retry or
 * ends; a bounce suppresses the address and counts toward bounce protection; the campaign completes when no
 * contact is left to mail.
 */
import type { Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { AccountMailAccess } from '../account';
import type { EventService } from '../events';
import type { Composed, MailService, MessageRow, SendOutcome } from '../mail';
import type { SuppressionService } from '../suppression';
import type { SubsequenceTriggers } from '../campaign';
import type { BounceProtection } from './bounces';
import type { StopReason } from './gates';
import { MINUTE } from './options';
import type { SendingCampaign, SendingStore } from './store';

/** A claimed message, rendered and stored, on its way to SMTP. */
export interface Claimed {
  message: MessageRow & { campaign_id: string; contact_id: string; account_id: string; step_number: number };
  composed: Composed;
  lastStep: boolean;
  nextDelayMinutes: number;
  email: string;
  /** The subsequence the step belongs to (null: the main sequence). */
  subsequenceId: string | null;
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

/** Retry waits after transient failures: 5 min doubling, at most 6 hours. */
const retryDelay = (attempts: number) => Math.min(5 * MINUTE * 2 ** attempts, 6 * 60 * MINUTE);

/** What SendingOutcomes is built from, by name. */
interface SendingOutcomesDeps {
  store: SendingStore;
  accounts: AccountMailAccess;
  mail: MailService;
  events: EventService;
  contacts: SendingContacts;
  suppression: SuppressionService;
  triggers: SubsequenceTriggers;
  bounces: BounceProtection;
  clock: Clock;
}

/** Records what became of each message and of its contact. */
export class SendingOutcomes {
  private readonly store: SendingStore;
  private readonly accounts: AccountMailAccess;
  private readonly mail: MailService;
  private readonly events: EventService;
  private readonly contacts: SendingContacts;
  private readonly suppression: SuppressionService;
  private readonly triggers: SubsequenceTriggers;
  private readonly bounces: BounceProtection;
  private readonly clock: Clock;

  constructor({ store, accounts, mail, events, contacts, suppression, triggers, bounces, clock }: SendingOutcomesDeps) {
    this.store = store;
    this.accounts = accounts;
    this.mail = mail;
    this.events = events;
    this.contacts = contacts;
    this.suppression = suppression;
    this.triggers = triggers;
    this.bounces = bounces;
    this.clock = clock;
  }
  /** The outcome of one send, with its event, in one transaction. */
  async record(trx: Executor, item: Claimed, outcome: SendOutcome): Promise<void> {
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
      await this.bounces.protect(trx, m.workspace_id, m.account_id, m.campaign_id);
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
      await this.accounts.changeStatus(trx, m.account_id, 'connectionError', outcome.response);
  }

  /** Ends a contact's sequence for `stopOnOpen` / `stopOnClick` (in the claim, which holds the campaign lock). */
  async stopContact(
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
}
