/**
 * What a reply's intent does: it is stored with the reply (a user's correction is kept), shown in the
 * unibox and counted per campaign, step and variant; with the campaign's `intentSetsLeadStatus` a clear
 * intent sets the lead status; and a removal request unsubscribes through the same path as the link.
 */
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { invalid, conflict, detail, notFound } from '../../platform/errors';
import type { CampaignService } from '../campaign';
import type { ContactService } from '../contact';
import type { EventService } from '../events';
import type { RemovalRef } from '../tracking';
import { decideIntent, REPLY_INTENTS, type IntentDecision, type Referral, type ReplyIntent } from './intent';
import type { IntentCountRow, IntentRow, IntentStore } from './intent-store';
import type { MailService, MessageRow } from '../mail';

/** The one removal path (the tracking module's unsubscribe), in the caller's transaction. */
export interface RemovalPort {
  unsubscribeIn(trx: Executor, ref: RemovalRef, source: 'reply', inboundMessageId: string): Promise<boolean>;
}

export type IntentCounts = Record<ReplyIntent, number>;
export const zeroIntents = (): IntentCounts => Object.fromEntries(REPLY_INTENTS.map((i) => [i, 0])) as IntentCounts;

/** What the unibox shows of a message's intent. */
export interface IntentView {
  intent: ReplyIntent | null;
  intentSource: 'rules' | 'user' | null;
  referral: Referral | null;
}

const NONE: IntentView = { intent: null, intentSource: null, referral: null };

const LEAD_STATUS: Partial<Record<ReplyIntent, 'interested' | 'notInterested' | 'wrongPerson'>> = {
  interested: 'interested',
  meetingRequest: 'interested',
  notInterested: 'notInterested',
  wrongPerson: 'wrongPerson',
};

export function viewOf(row: IntentRow | undefined): IntentView {
  if (!row) return NONE;
  const referral =
    row.referral_name || row.referral_email ? { name: row.referral_name, email: row.referral_email } : null;
  return { intent: row.intent as ReplyIntent, intentSource: row.source, referral };
}

/** What ReplyIntentService is built from, by name. */
export interface ReplyIntentServiceDeps {
  db: Db;
  store: IntentStore;
  mail: Pick<MailService, 'get'>;
  campaigns: CampaignService;
  contacts: ContactService;
  removal: RemovalPort;
  events: EventService;
  clock: Clock;
}

export class ReplyIntentService {
  private readonly db: Db;
  private readonly store: IntentStore;
  private readonly mail: Pick<MailService, 'get'>;
  private readonly campaigns: CampaignService;
  private readonly contacts: ContactService;
  private readonly removal: RemovalPort;
  private readonly events: EventService;
  private readonly clock: Clock;

  constructor({ db, store, mail, campaigns, contacts, removal, events, clock }: ReplyIntentServiceDeps) {
    this.db = db;
    this.store = store;
    this.mail = mail;
    this.campaigns = campaigns;
    this.contacts = contacts;
    this.removal = removal;
    this.events = events;
    this.clock = clock;
  }

  /** Decides and stores the intent of a reply just stored (the reader's transaction). */
  async decide(trx: Executor, reply: MessageRow, original: MessageRow): Promise<IntentDecision> {
    const decision = decideIntent(reply.text_body, reply.from_address);
    const now = this.clock.now();
    await this.store.insert(trx, {
      message_id: reply.id,
      workspace_id: reply.workspace_id,
      campaign_id: original.campaign_id,
      step_id: original.step_id,
      variant_id: original.variant_id,
      contact_id: original.contact_id,
      intent: decision.intent,
      source: 'rules',
      referral_name: decision.referral?.name ?? null,
      referral_email: decision.referral?.email ?? null,
      replied_at: reply.created_at,
      decided_at: now,
    });
    return decision;
  }

  /**
   * What the intent changes, in the caller's transaction: a removal request unsubscribes (always); a clear
   * intent sets the lead status when the campaign lets intents do so.
   */
  async apply(
    trx: Executor,
    workspaceId: string,
    reply: Pick<MessageRow, 'id' | 'contact_id' | 'campaign_id'>,
    about: Omit<RemovalRef, 'workspaceId' | 'contactId'>,
    intent: ReplyIntent,
  ): Promise<void> {
    if (!reply.contact_id) return;
    if (intent === 'unsubscribeRequest') {
      await this.removal.unsubscribeIn(trx, { workspaceId, contactId: reply.contact_id, ...about }, 'reply', reply.id);
      return;
    }
    const leadStatus = LEAD_STATUS[intent];
    if (!leadStatus) return;
    const campaign = reply.campaign_id
      ? await this.campaigns.findInWorkspace(trx, workspaceId, reply.campaign_id).catch(() => null)
      : null;
    if (campaign && !campaign.intent_sets_lead_status) return;
    const change = await this.contacts.setLeadStatusFromReply(trx, workspaceId, reply.contact_id, leadStatus);
    if (!change) return;
    await this.events.record(trx, {
      workspaceId,
      type: 'contact.leadStatusChanged',
      data: {
        campaignId: change.row.campaign_id,
        contactId: change.row.id,
        email: change.row.email,
        previous: change.previous,
        leadStatus: change.leadStatus,
      },
    });
  }

  /** The intents of these messages, by message id (messages without one are absent). */
  async viewsOf(workspaceId: string, messageIds: string[]): Promise<Map<string, IntentView>> {
    const rows = await this.store.forMessages(this.db, workspaceId, messageIds);
    return new Map(rows.map((r) => [r.message_id, viewOf(r)]));
  }

  /** POST /v2/email/set-intent: the correction is kept, and acts as a decided intent does. */
  async set(workspaceId: string, body: { id: string; intent: ReplyIntent; referral?: Referral }): Promise<MessageRow> {
    if (body.referral && body.intent !== 'wrongPerson') {
      throw invalid('A referral can only be given with the intent wrongPerson.', [
        detail('referral', 'is allowed only when intent is wrongPerson', 'referralWithoutWrongPerson'),
      ]);
    }
    return this.db.transaction(async (trx) => {
      const message = await this.mail.get(trx, workspaceId, body.id);
      if (!message) throw notFound('Email not found.');
      if (message.direction !== 'inbound' || message.kind !== 'reply') {
        throw conflict(
          `Only replies have an intent; this message is ${message.direction === 'outbound' ? 'outbound' : `an inbound ${message.kind}`}.`,
          [detail('id', `is a ${message.kind} message, not a reply`, 'notAReply')],
        );
      }
      const [current] = await this.store.forMessages(trx, workspaceId, [message.id]);
      const keepReferral = body.intent === 'wrongPerson' && !body.referral && current;
      const patch = {
        intent: body.intent,
        source: 'user' as const,
        referral_name: body.referral ? body.referral.name : keepReferral ? current.referral_name : null,
        referral_email: body.referral ? body.referral.email : keepReferral ? current.referral_email : null,
        decided_at: this.clock.now(),
      };
      if (current) {
        await this.store.update(trx, workspaceId, message.id, patch);
      } else {
        // A reply stored before intents existed gets its row now.
        await this.store.insert(trx, {
          message_id: message.id,
          workspace_id: workspaceId,
          campaign_id: message.campaign_id,
          step_id: null,
          variant_id: null,
          contact_id: message.contact_id,
          replied_at: message.created_at,
          ...patch,
        });
      }
      const about = {
        campaignId: message.campaign_id,
        stepId: current?.step_id ?? null,
        variantId: current?.variant_id ?? null,
        accountId: message.account_id,
        messageId: null,
      };
      await this.apply(trx, workspaceId, message, about, body.intent);
      return message;
    });
  }

  /** Replies per intent of one campaign, per (step, variant), per step and in all. */
  async countsByVariant(
    db: Executor,
    scope: { workspaceId: string; campaignId: string; days: { startDate: string; endDate: string; timezone: string } },
  ) {
    const rows: IntentCountRow[] = await this.store.countsByVariant(db, scope);
    const total = zeroIntents();
    const byStep = new Map<string, IntentCounts>();
    const byVariant = new Map<string, IntentCounts>();
    const add = (map: Map<string, IntentCounts>, key: string, row: IntentCountRow) => {
      const counts = map.get(key) ?? zeroIntents();
      counts[row.intent as ReplyIntent] += row.n;
      map.set(key, counts);
    };
    for (const row of rows) {
      if (row.g_step === 1) total[row.intent as ReplyIntent] += row.n;
      else if (row.g_variant === 1 && row.step_id) add(byStep, row.step_id, row);
      else if (row.g_variant === 0 && row.variant_id) add(byVariant, row.variant_id, row);
    }
    return { total, byStep, byVariant };
  }
}
