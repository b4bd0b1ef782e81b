/** Why a campaign is (not) sending: its contacts' states, each step's sends, the reasons and the next send. */
import type { components } from '../../../generated/api';
import type { Db } from '../../db';
import type { Clock } from '../../platform/clock';
import type { MailService } from '../mail';
import { nextOpenMoment, startOfLocalDay } from '../../time/schedule';
import { RECIPIENT_DOMAIN_LIMIT } from './claim';
import { NOT_VERIFIED } from './gates';
import type { SendingCampaign, SendingStore } from './store';

type SendingStatus = components['schemas']['CampaignSendingStatus'];
type SendingReason = components['schemas']['SendingReason'];

/** What SendingStatusReader is built from, by name. */
interface SendingStatusReaderDeps {
  db: Db;
  store: SendingStore;
  mail: MailService;
  clock: Clock;
}

/** Answers GET /v2/campaign/sending-status. */
export class SendingStatusReader {
  private readonly db: Db;
  private readonly store: SendingStore;
  private readonly mail: MailService;
  private readonly clock: Clock;

  constructor({ db, store, mail, clock }: SendingStatusReaderDeps) {
    this.db = db;
    this.store = store;
    this.mail = mail;
    this.clock = clock;
  }
  async sendingStatus(view: {
    id: string;
    status: SendingStatus['status'];
    schedule: SendingCampaign['schedule'];
    dailyLimit: number | null;
    sendableAccounts: number | null;
    sendInLeadTimezone: boolean;
  }): Promise<SendingStatus> {
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
}
