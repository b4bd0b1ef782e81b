/**
 * The sender job (runOnce): members due to send are locked (FOR UPDATE SKIP LOCKED) and, inside their window and
 * under today's ramp and the account's daily limit (campaign, placement and warm-up together), each gets one new
 * warm-up email to a partner stored as `sending` in the same transaction; answers the readers scheduled are
 * claimed the same way. Only then does SMTP start (through the mail module), so two workers never send one
 * warm-up email twice; one left `sending` by a worker that died becomes `unknown`, never re-sent. Each sender's
 * emails of a run are appended to its Sent folder in one IMAP session.
 *
 * A hard bounce pauses the sender (`hard_bounce`); a partner that refuses (mailbox full, 4xx) is skipped for a
 * day with the reason.
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { newId } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import { startOfLocalDay } from '../../time/schedule';
import type { AccountMailAccess, AccountRow, AccountService } from '../account';
import type { MailLogin, MailService, SendOutcome } from '../mail';
import type { WorkspaceService } from '../workspace';
import { firstMessage } from './content';
import { eachAtOnce, type WarmupSettings } from './jobs';
import { nextGapMs, nextLocalDay, rampTarget, windowOpensAt, type WarmupPlanSettings } from './plan';
import { DAY_MS, HEALTH_DAYS, type AccountMember, type Member, type WarmupPool } from './pool';
import type { MemberRow, Pace, WarmupMessageRow, WarmupStore } from './store';

const SENDING_LEASE_MS = 10 * 60_000;
const PARTNER_SKIP_MS = 24 * 3_600_000;

/** An account's sends of its day, counted under its send lock. */
interface SendsToday {
  /** What it may still send today (its daily limit less every kind of mail sent or in flight). */
  room: number;
  /** Warm-up emails (not answers) started today: the ramp counts these. */
  first: number;
  /** When its next day starts (inside its warm-up window when it is in the pool). */
  nextDay: Date;
}

/** What WarmupSender is built from, by name. */
interface WarmupSenderDeps {
  db: Db;
  store: WarmupStore;
  pool: Pick<WarmupPool, 'members' | 'memberLogin' | 'loginOf' | 'loginFailed'>;
  accounts: Pick<AccountService, 'findAnyAccount' | 'noteWarmup' | 'stopWarmup'>;
  mailAccess: Pick<AccountMailAccess, 'lockForSending'>;
  mail: Pick<MailService, 'send' | 'appendToSent' | 'sentSinceByAccount'>;
  workspaces: Pick<WorkspaceService, 'timezones'>;
  /** The per-deployment key of the marker. */
  markerKey: () => Buffer;
  clock: Clock;
  logger: Logger;
  settings: Pick<WarmupSettings, 'sendBatch' | 'sendConcurrency'>;
}

export class WarmupSender {
  /** Members known to have a warmup_members row (rows are never deleted): each run inserts only the new ones. */
  private readonly joined = new Set<string>();

  private readonly db: Db;
  private readonly store: WarmupStore;
  private readonly pool: Pick<WarmupPool, 'members' | 'memberLogin' | 'loginOf' | 'loginFailed'>;
  private readonly accounts: Pick<AccountService, 'findAnyAccount' | 'noteWarmup' | 'stopWarmup'>;
  private readonly mailAccess: Pick<AccountMailAccess, 'lockForSending'>;
  private readonly mail: Pick<MailService, 'send' | 'appendToSent' | 'sentSinceByAccount'>;
  private readonly workspaces: Pick<WorkspaceService, 'timezones'>;
  private readonly markerKey: () => Buffer;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly settings: Pick<WarmupSettings, 'sendBatch' | 'sendConcurrency'>;

  constructor({
    db,
    store,
    pool,
    accounts,
    mailAccess,
    mail,
    workspaces,
    markerKey,
    clock,
    logger,
    settings,
  }: WarmupSenderDeps) {
    this.db = db;
    this.store = store;
    this.pool = pool;
    this.accounts = accounts;
    this.mailAccess = mailAccess;
    this.mail = mail;
    this.workspaces = workspaces;
    this.markerKey = markerKey;
    this.clock = clock;
    this.logger = logger;
    this.settings = settings;
  }

  /** Members and answers due to send, for the metrics. */
  backlog() {
    return this.store.sendBacklog(this.db, this.clock.now());
  }

  private plan(member: AccountMember): WarmupPlanSettings {
    const r = member.row;
    return {
      dailyLimit: r.warmup_daily_limit,
      increasePerDay: r.warmup_increase_per_day,
      windowFrom: r.warmup_window_from,
      windowTo: r.warmup_window_to,
      weekdaysOnly: r.warmup_weekdays_only,
      timezone: member.timezone,
      startedAt: r.warmup_started_at,
    };
  }

  /** One pass: how many warm-up emails it started. */
  async runOnce(): Promise<number> {
    const now = this.clock.now();
    const [, pool] = await Promise.all([
      this.store.expireSending(this.db, new Date(now.getTime() - SENDING_LEASE_MS)),
      this.pool.members(this.db),
    ]);
    const members = pool.filter((m) => m.inPool);
    // A member that just joined sends within the next half minute (when inside its window).
    const joining = members.filter((m) => !this.joined.has(m.id));
    await this.store.ensureMembers(
      this.db,
      joining.map((m) => ({
        member_id: m.id,
        next_send_at: new Date(now.getTime() + randomInt(0, 30_000)),
        next_read_at: now,
      })),
    );
    for (const m of joining) this.joined.add(m.id);
    const all = await this.db.transaction(async (trx) => {
      const replies = await this.store.lockDueReplies(trx, now, this.settings.sendBatch);
      const senders = members.filter((m): m is AccountMember => m.kind === 'account');
      const due = senders.length
        ? await this.store.claimDueSenders(
            trx,
            senders.map((m) => m.id),
            now,
            this.settings.sendBatch,
          )
        : [];
      const today = await this.sendsToday(
        trx,
        [...replies.map((r) => r.sender_id), ...due.map((d) => d.member_id)],
        pool,
        now,
      );
      // Answers first (they are owed), then new emails, each within what the account has left today.
      return [
        ...(await this.startReplies(trx, replies, today, now)),
        ...(await this.planFirstEmails(trx, members, due, today, now)),
      ];
    });
    const byId = new Map(members.map((m) => [m.id, m]));
    const bySender = new Map<string, WarmupMessageRow[]>();
    for (const m of all) bySender.set(m.sender_id, [...(bySender.get(m.sender_id) ?? []), m]);
    const sent: string[] = [];
    await eachAtOnce([...bySender], this.settings.sendConcurrency, async ([senderId, messages]) => {
      sent.push(...(await this.deliverFrom(senderId, byId.get(senderId), messages)));
    });
    // The run's plain sends are recorded in one statement (until then they stay `sending`: never sent twice).
    await this.store.finishMessages(this.db, sent, { status: 'sent', status_reason: null });
    return all.length;
  }

  /**
   * Locks the accounts among `ids` for sending (every sender of an account counts and claims under this lock)
   * and returns, per account, what it may still send today (campaign, placement-test and warm-up mail share
   * the daily limit, claims in flight included) and the warm-up emails it started today. Pool-only mailboxes
   * have no daily limit here.
   */
  private async sendsToday(trx: Executor, ids: string[], pool: Member[], now: Date): Promise<Map<string, SendsToday>> {
    const byId = new Map(pool.map((m) => [m.id, m]));
    const accounts = new Map<string, { limit: number; timezone: string; plan: WarmupPlanSettings | null }>();
    for (const id of new Set(ids)) {
      const member = byId.get(id);
      if (member?.kind === 'account')
        accounts.set(id, { limit: member.row.daily_limit, timezone: member.timezone, plan: this.plan(member) });
      else if (!member) {
        // An answer whose sender left the pool meanwhile still counts against its account's limit.
        const row = await this.accounts.findAnyAccount(trx, id);
        if (!row) continue;
        const timezone = (await this.workspaces.timezones(trx, [row.workspace_id])).get(row.workspace_id) ?? 'UTC';
        accounts.set(id, { limit: row.daily_limit, timezone, plan: null });
      }
    }
    await this.mailAccess.lockForSending(trx, [...accounts.keys()]);
    const out = new Map<string, SendsToday>();
    for (const timezone of new Set([...accounts.values()].map((a) => a.timezone))) {
      const inZone = [...accounts].filter(([, a]) => a.timezone === timezone).map(([id]) => id);
      const since = startOfLocalDay(timezone, now);
      const warmup = await this.store.sentSince(trx, inZone, since);
      const other = await this.mail.sentSinceByAccount(trx, inZone, ['campaign', 'placement'], since);
      for (const id of inZone) {
        const { limit, plan } = accounts.get(id)!;
        const nextDay = nextLocalDay(timezone, now);
        out.set(id, {
          room: limit - (other.get(id) ?? 0) - (warmup.get(id)?.all ?? 0),
          first: warmup.get(id)?.first ?? 0,
          nextDay: plan ? windowOpensAt(plan, nextDay) : nextDay,
        });
      }
    }
    return out;
  }

  /** Starts the locked due answers whose sender has room today; the others wait for the sender's next day. */
  private async startReplies(
    trx: Executor,
    replies: WarmupMessageRow[],
    today: Map<string, SendsToday>,
    now: Date,
  ): Promise<WarmupMessageRow[]> {
    const start: string[] = [];
    const later = new Map<number, string[]>();
    for (const reply of replies) {
      const sender = today.get(reply.sender_id);
      if (!sender || sender.room > 0) {
        if (sender) sender.room -= 1;
        start.push(reply.id);
        continue;
      }
      // Spread over the hour after the window opens, so a day's held answers do not all go at once.
      const at = sender.nextDay.getTime() + randomInt(0, 60) * 60_000;
      later.set(at, [...(later.get(at) ?? []), reply.id]);
    }
    for (const [at, ids] of later) await this.store.postponeReplies(trx, ids, new Date(at));
    return this.store.startReplies(trx, start, now);
  }

  /** Writes one warm-up email for each locked due sender that may send now (in the caller's transaction). */
  private async planFirstEmails(
    trx: Executor,
    members: Member[],
    due: MemberRow[],
    today: Map<string, SendsToday>,
    now: Date,
  ): Promise<WarmupMessageRow[]> {
    if (due.length === 0) return [];
    const byId = new Map(members.map((m) => [m.id, m]));
    const skipped = await this.store.skippedUntilAfter(trx, now);
    const partnerCounts = await this.store.partnerCounts(
      trx,
      due.map((d) => d.member_id),
      new Date(now.getTime() - HEALTH_DAYS * DAY_MS),
    );
    const out: WarmupMessageRow[] = [];
    const paces: Pace[] = [];
    for (const row of due) {
      const sender = byId.get(row.member_id) as AccountMember;
      const plan = this.plan(sender);
      const opens = windowOpensAt(plan, now);
      if (opens > now) {
        paces.push({
          member_id: sender.id,
          next_send_at: new Date(opens.getTime() + randomInt(0, 5 * 60_000)),
          last_subject: null,
        });
        continue;
      }
      const target = rampTarget(plan, now);
      const counted = today.get(sender.id)!;
      const sent = counted.first;
      // Warm-up, campaign and placement-test mail share the account's daily limit.
      const capacity = counted.room;
      if (sent >= target || capacity <= 0) {
        paces.push({
          member_id: sender.id,
          next_send_at: windowOpensAt(plan, nextLocalDay(plan.timezone, now)),
          last_subject: null,
        });
        continue;
      }
      const partner = this.pickPartner(
        sender,
        members,
        skipped,
        partnerCounts.get(sender.id) ?? new Map<string, number>(),
      );
      if (!partner) {
        await this.accounts.noteWarmup(trx, sender.id, {
          code: 'pool_too_small',
          message: 'No other mailbox in the warm-up pool can take mail now: it sends nothing until one joins.',
        });
        paces.push({ member_id: sender.id, next_send_at: new Date(now.getTime() + 5 * 60_000), last_subject: null });
        continue;
      }
      if (sender.row.warmup_reason_code === 'pool_too_small') await this.accounts.noteWarmup(trx, sender.id, null);
      const id = newId();
      const messageId = `${id}@${sender.domain}`;
      const content = firstMessage(this.markerKey(), messageId, row.last_subject);
      const message: WarmupMessageRow = {
        id,
        message_id: messageId,
        kind: 'first',
        parent_id: null,
        sender_id: sender.id,
        recipient_id: partner.id,
        sender_email: sender.email,
        recipient_email: partner.email,
        subject: content.subject,
        text: content.text,
        html: content.html,
        in_reply_to: null,
        references: null,
        status: 'sending',
        status_reason: null,
        send_at: now,
        sent_at: now,
        landed: null,
        seen_at: null,
        rescued_at: null,
        replied_at: null,
        created_at: now,
      };
      counted.room -= 1;
      paces.push({
        member_id: sender.id,
        last_subject: content.subject,
        next_send_at: new Date(now.getTime() + nextGapMs(plan, now, Math.min(target - sent - 1, capacity - 1))),
      });
      out.push(message);
    }
    await this.store.insertMessages(trx, out);
    await this.store.setPaces(trx, paces);
    return out;
  }

  /**
   * A partner for the next email: another pool member taking mail (not skipped, not the sender's own address),
   * preferring other domains and the partners this sender wrote to least in the last 7 days, at random among
   * equals: mail spreads over many partners and domains, never fixed pairs.
   */
  private pickPartner(
    sender: AccountMember,
    members: Member[],
    skipped: Set<string>,
    counts: Map<string, number>,
  ): Member | null {
    const candidates = members.filter(
      (m) => m.id !== sender.id && m.email !== sender.email && m.inPool && !skipped.has(m.id),
    );
    if (candidates.length === 0) return null;
    const score = (m: Member) => (counts.get(m.id) ?? 0) * 2 + (m.domain === sender.domain ? 1 : 0);
    const best = Math.min(...candidates.map(score));
    const pool = candidates.filter((m) => score(m) === best);
    return pool[randomInt(0, pool.length)];
  }

  /**
   * Sends one sender's claimed warm-up emails (over its pooled SMTP connections), appends those that went out
   * to its Sent folder in one IMAP session (one login for all of them), and records answers and failures; the
   * ids of plain first emails that went out, for the caller to record together.
   */
  private async deliverFrom(
    senderId: string,
    member: Member | undefined,
    messages: WarmupMessageRow[],
  ): Promise<string[]> {
    // A sender that left the pool meanwhile (an answer claimed after it paused) is looked up.
    const login = member ? this.pool.memberLogin(member, 'smtp') : await this.pool.loginOf(this.db, senderId, 'smtp');
    if (!login) {
      await this.store.finishMessages(
        this.db,
        messages.map((m) => m.id),
        { status: 'failed', status_reason: 'The sender has no SMTP login.' },
      );
      return [];
    }
    const account = member
      ? member.kind === 'account'
        ? member.row
        : undefined
      : await this.accounts.findAnyAccount(this.db, senderId);
    const sent = await Promise.all(messages.map((m) => this.sendOne(login, account, m)));
    const raws = sent.flatMap((r) => (r.raw ? [r.raw] : []));
    if (raws.length) {
      const imap = member ? this.pool.memberLogin(member, 'imap') : await this.pool.loginOf(this.db, senderId, 'imap');
      try {
        if (imap) await this.mail.appendToSent(imap, raws);
      } catch (err) {
        this.logger.warn(
          { memberId: senderId, err: (err as Error).message },
          'warm-up: could not append sent mail to Sent',
        );
      }
    }
    // Answers and failures each need more than their status (a transaction each).
    const plain = messages.filter((_, i) => sent[i].outcome.kind === 'sent' && !sent[i].parent);
    for (const [i, m] of messages.entries())
      if (!plain.includes(m)) await this.record(m, sent[i].parent, sent[i].outcome, account);
    return plain.map((m) => m.id);
  }

  /** Sends one claimed warm-up email; the bytes sent when the server took it. */
  private async sendOne(
    login: MailLogin,
    account: AccountRow | undefined,
    message: WarmupMessageRow,
  ): Promise<{ outcome: SendOutcome; raw: Buffer | null; parent: WarmupMessageRow | undefined }> {
    const parent = message.parent_id ? await this.store.message(this.db, message.parent_id) : undefined;
    try {
      const result = await this.mail.send({
        login,
        draft: {
          id: message.id,
          to: message.recipient_email,
          subject: message.subject,
          text: message.text,
          ...(message.html ? { html: message.html } : {}),
          date: this.clock.now(),
          ...(parent
            ? {
                parent: {
                  id: parent.id,
                  subject: parent.subject,
                  message_id: `<${parent.message_id}>`,
                  references: parent.references ? parent.references.split(' ') : [],
                  thread_id: parent.parent_id ?? parent.id,
                },
              }
            : {}),
        },
        // Accounts' warm-up mail is recorded as `warmup` (hidden from the unibox, counted against the daily limit).
        ...(account
          ? { record: { workspaceId: account.workspace_id, accountId: account.id, kind: 'warmup' as const } }
          : {}),
      });
      return { outcome: result.outcome, raw: result.outcome.kind === 'sent' ? result.raw : null, parent };
    } catch (err) {
      return { outcome: { kind: 'transient', scope: 'message', response: (err as Error).message }, raw: null, parent };
    }
  }

  /** Records what happened to one warm-up email, and what it means for the sender and the partner. */
  private async record(
    message: WarmupMessageRow,
    parent: WarmupMessageRow | undefined,
    outcome: SendOutcome,
    account: AccountRow | undefined,
  ): Promise<void> {
    await this.db.transaction(async (trx) => {
      if (outcome.kind === 'sent' || outcome.kind === 'unknown') {
        await this.store.finishMessage(trx, message.id, {
          status: outcome.kind,
          status_reason: outcome.kind === 'unknown' ? outcome.response : null,
        });
        if (parent) await this.store.markReplied(trx, parent.id, this.clock.now());
        return;
      }
      if (outcome.kind === 'accountFailure') {
        await this.store.finishMessage(trx, message.id, { status: 'failed', status_reason: outcome.response });
        await this.pool.loginFailed(trx, message.sender_id, outcome.response);
        return;
      }
      if (outcome.kind === 'bounced' && !partnerRefusal(outcome.response)) {
        await this.store.finishMessage(trx, message.id, { status: 'bounced', status_reason: outcome.response });
        if (account)
          await this.accounts.stopWarmup(trx, account.id, 'paused', {
            code: 'hard_bounce',
            message: `A warm-up email to ${message.recipient_email} bounced: ${outcome.response}`,
          });
        return;
      }
      if (outcome.kind === 'bounced' || partnerRefusal(outcome.response)) {
        // The partner refused (mailbox full, try later): skipped for a day with the reason, the email not retried.
        await this.store.finishMessage(trx, message.id, {
          status: 'failed',
          status_reason: `partner_refused: ${outcome.response}`,
        });
        await this.store.updateMember(trx, message.recipient_id, {
          skip_until: new Date(this.clock.now().getTime() + PARTNER_SKIP_MS),
          last_error: `Refused warm-up mail: ${outcome.response}`.slice(0, 1000),
        });
        return;
      }
      // The sender's server did not answer: this email is dropped (warm-up mail is never queued up), the next one follows the plan.
      await this.store.finishMessage(trx, message.id, {
        status: 'failed',
        status_reason: `transient: ${outcome.response}`,
      });
    });
  }
}

/** A refusal that is the partner's (a full mailbox, a temporary refusal), not a sign against the sender. */
function partnerRefusal(response: string): boolean {
  return /^\s*4\d\d\b|\b(452|552)\b|\b[45]\.2\.2\b|mailbox full|quota/i.test(response);
}
