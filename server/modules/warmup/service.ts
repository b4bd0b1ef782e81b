/**
 * The warm-up pool: every account of the deployment with warm-up enabled (any workspace) plus the pool-only
 * mailboxes an operator adds, writing to each other.
 *
 * Two worker jobs share the work across any number of processes:
 *   - `sender` (runOnce): members due to send are locked (FOR UPDATE SKIP LOCKED) and, inside their window and
 *     under today's ramp and the account's daily limit (campaign, placement and warm-up together), each gets one new
 *     warm-up email to a partner stored as `sending` in the same transaction; answers the readers scheduled are
 *     claimed the same way. Only then does SMTP start (through the mail module), so two workers never send one
 *     warm-up email twice; one left `sending` by a worker that died becomes `unknown`, never re-sent. Each
 *     sender's emails of a run are appended to its Sent folder in one IMAP session.
 *   - `reader` (runOnce): mailboxes expecting warm-up mail are claimed for a lease, then read over IMAP in one
 *     session each: warm-up mail (recognised by its Message-ID header in the pool's record) found in the spam
 *     folder is recorded as spam, marked read and moved to INBOX (the rescue); in INBOX it is recorded (inbox
 *     unless rescued), marked read, some flagged, answered to the sender's reply rate after a human delay, and
 *     archived into the `Warmup` folder.
 *
 * Protection: a hard bounce pauses the sender (`hard_bounce`); spam for most of the last 7 days' placement
 * pauses it (`spam_placement`); a refused login puts the account in connectionError (out of the pool until it
 * works again); a partner that refuses (mailbox full, 4xx) is skipped for a day with the reason.
 */
import { randomInt } from 'node:crypto';
import type { components } from '../../../generated/api';
import type { Clock } from '../../clock';
import { queryAll, type Db, type Executor } from '../../db';
import type { Logger } from '../../logger';
import { domainOf } from '../../email-address';
import { newId } from '../../ids';
import { detail, conflict, notFound } from '../../errors';
import type { AccountMailAccess, AccountRow, AccountService } from '../account';
import type { SecretBox } from '../../secrets';
import { addDays, resolveRange } from '../../time/days';
import type { EventService } from '../events';
import {
  type MailLogin,
  type MailService,
  MailboxError,
  type MailboxSession,
  type SendOutcome,
  replySubject,
} from '../mail';
import { startOfLocalDay } from '../../time/schedule';
import type { WorkspaceService, ZonedWorkspace } from '../workspace';
import { firstMessage, replyMessage } from './content';
import { healthOf, nextGapMs, nextLocalDay, rampTarget, windowOpensAt, type WarmupPlanSettings } from './plan';
import type { ExpectedRow, MemberRow, Pace, PoolMailboxRow, WarmupMessageRow, WarmupStore } from './store';

type Schemas = components['schemas'];
type Counts = Schemas['WarmupCounts'];

/** One pool member: an account (with its workspace) or a pool-only mailbox (no workspace, never a sender of first emails). */
export interface PoolMember {
  id: string;
  kind: 'account' | 'mailbox';
  email: string;
  domain: string;
  workspaceId: string | null;
  /** Sends and reads warm-up mail now (running, logins working). */
  inPool: boolean;
}

export interface WarmupSettings {
  /** Members one run locks to send (and answers it claims). */
  sendBatch: number;
  /** Senders of a run delivering at once (each over its own pooled SMTP connections). */
  sendConcurrency: number;
  /** Mailboxes one run reads, and how many at once. */
  readBatch: number;
  readConcurrency: number;
  /** How often a mailbox is read. */
  readIntervalMs: number;
  /** Messages of one folder looked at per read (only their Message-ID header is fetched: a 20 MB message costs no more). */
  messagesPerRead: number;
  /** Answers go out between these many minutes after the reader saw the email. */
  replyDelayMinutes: [number, number];
  /** Share of read warm-up emails also flagged important, in percent. */
  flagPercent: number;
  /** Spam protection: at least this many placements seen in 7 days before it may pause. */
  spamMinSeen: number;
}

export const DEFAULT_WARMUP_SETTINGS: WarmupSettings = {
  // A whole tick's due senders in one run (500 accounts at 40 a day: ~140 every 10 minutes), sent side by side.
  sendBatch: 500,
  sendConcurrency: 100,
  readBatch: 50,
  readConcurrency: 8,
  readIntervalMs: 60_000,
  messagesPerRead: 500,
  replyDelayMinutes: [5, 45],
  flagPercent: 30,
  spamMinSeen: 10,
};

const ARCHIVE_FOLDER = 'Warmup';
const SENDING_LEASE_MS = 10 * 60_000;
const READ_LEASE_MS = 5 * 60_000;
const PARTNER_SKIP_MS = 24 * 3_600_000;
const HEALTH_DAYS = 7;
const DAY_MS = 86_400_000;
const EXPECT_DAYS = 2;

/** The Message-ID of a raw message's header block, without angle brackets; null when it has none. */
export function headerMessageId(source: Buffer): string | null {
  const text = source.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const head = (end >= 0 ? text.slice(0, end) : text).replace(/\r?\n[ \t]+/g, ' ');
  const match = /^message-id:\s*<([^>\s]+)>/im.exec(head);
  return match ? match[1] : null;
}

interface AccountMember extends PoolMember {
  kind: 'account';
  row: AccountRow;
  timezone: string;
}

type Member = AccountMember | (PoolMember & { kind: 'mailbox'; row: PoolMailboxRow });

/** An account's sends of its day, counted under its send lock. */
interface SendsToday {
  /** What it may still send today (its daily limit less every kind of mail sent or in flight). */
  room: number;
  /** Warm-up emails (not answers) started today: the ramp counts these. */
  first: number;
  /** When its next day starts (inside its warm-up window when it is in the pool). */
  nextDay: Date;
}

export class WarmupService {
  private markerKey: Buffer | null = null;
  /** Members known to have a warmup_members row (rows are never deleted): each run inserts only the new ones. */
  private readonly joined = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly store: WarmupStore,
    private readonly accounts: AccountService,
    private readonly mailAccess: AccountMailAccess,
    private readonly mail: MailService,
    private readonly workspaces: WorkspaceService,
    private readonly events: EventService,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly settings: WarmupSettings = DEFAULT_WARMUP_SETTINGS,
  ) {}

  /** The per-deployment key of the marker (derived from the server's secret key). */
  private key(): Buffer {
    this.markerKey ??= this.secrets.deriveKey('warmup-marker', 'warmup');
    return this.markerKey;
  }

  // --- the pool ---

  private async poolMembers(db: Executor): Promise<Member[]> {
    const [accounts, mailboxes] = await queryAll(db, [
      () => this.accounts.warmupAccounts(db),
      () => this.store.mailboxes(db),
    ]);
    const timezones = await this.workspaces.timezones(db, [...new Set(accounts.map((a) => a.workspace_id))]);
    return [
      ...accounts.map((row): Member => ({
        id: row.id,
        kind: 'account',
        email: row.email,
        domain: domainOf(row.email).toLowerCase(),
        workspaceId: row.workspace_id,
        inPool: row.in_pool,
        row,
        timezone: timezones.get(row.workspace_id) ?? 'UTC',
      })),
      ...mailboxes.map((row): Member => ({
        id: row.id,
        kind: 'mailbox',
        email: row.email,
        domain: domainOf(row.email).toLowerCase(),
        workspaceId: null,
        inPool: row.status === 'active',
        row,
      })),
    ];
  }

  /** Every member of the pool (warm-up-enabled accounts of every workspace and pool-only mailboxes), with whether it takes part now. */
  async listPool(db: Executor = this.db): Promise<PoolMember[]> {
    return (await this.poolMembers(db)).map(({ id, kind, email, domain, workspaceId, inPool }) => ({
      id,
      kind,
      email,
      domain,
      workspaceId,
      inPool,
    }));
  }

  /** A member's SMTP or IMAP login (accounts through the account module, pool-only mailboxes decrypted here). */
  async loginOf(db: Executor, memberId: string, kind: 'smtp' | 'imap'): Promise<MailLogin | null> {
    const mailbox = await this.store.mailbox(db, memberId);
    if (mailbox) return this.mailboxLogin(mailbox, kind);
    const account = await this.accounts.findAnyAccount(db, memberId);
    if (!account) return null;
    return kind === 'smtp'
      ? this.mailAccess.smtpLogin(db, account.workspace_id, account.id)
      : this.mailAccess.imapLogin(db, account.id);
  }

  /** A pool member's login from the row the pool look-up already loaded (no query). */
  private memberLogin(member: Member, kind: 'smtp' | 'imap'): MailLogin | null {
    if (member.kind === 'mailbox') return this.mailboxLogin(member.row, kind);
    return kind === 'imap' && member.row.status === 'connectionError'
      ? null
      : this.mailAccess.loginFromRow(member.row, kind);
  }

  private mailboxLogin(mailbox: PoolMailboxRow, kind: 'smtp' | 'imap'): MailLogin {
    const host = kind === 'smtp' ? mailbox.smtp_host : mailbox.imap_host;
    const port = kind === 'smtp' ? mailbox.smtp_port : mailbox.imap_port;
    const username = kind === 'smtp' ? mailbox.smtp_user : mailbox.imap_user;
    const enc = kind === 'smtp' ? mailbox.smtp_password_enc : mailbox.imap_password_enc;
    return {
      accountId: mailbox.id,
      workspaceId: '',
      email: mailbox.email,
      host,
      port,
      username,
      password: this.secrets.decrypt(enc, `${mailbox.id}:${kind}`),
    };
  }

  /** Warm-up emails each account sent today (local day in `timezone`): the account view's `warmupSentToday`. */
  sentToday = (db: Executor, accountIds: string[], timezone: string): Promise<Map<string, number>> =>
    this.store
      .sentSince(db, accountIds, startOfLocalDay(timezone, this.clock.now()))
      .then((sent) => new Map([...sent].map(([id, n]) => [id, n.all])));

  /** inbox / (inbox + spam) of each member's warm-up mail over the last 7 days, with its label. */
  async healthScores(db: Executor, memberIds: string[]): Promise<Map<string, Schemas['WarmupHealth']>> {
    const since = new Date(this.clock.now().getTime() - HEALTH_DAYS * DAY_MS);
    const placed = await this.store.placement(db, memberIds, since);
    return new Map(
      memberIds.map((id) => {
        const { inbox, spam } = placed.get(id) ?? { inbox: 0, spam: 0 };
        return [id, { days: HEALTH_DAYS, landedInbox: inbox, landedSpam: spam, ...healthOf(inbox, spam) }];
      }),
    );
  }

  // --- pool-only mailboxes (admin CLI) ---

  async addMailbox(input: {
    email: string;
    password: string;
    smtpHost: string;
    smtpPort: number;
    imapHost: string;
    imapPort: number;
    username?: string;
    imapPassword?: string;
  }): Promise<PoolMailboxRow> {
    this.secrets.ensureKey('warmup');
    const id = newId();
    const email = input.email.trim().toLowerCase();
    const now = this.clock.now();
    const row: PoolMailboxRow = {
      id,
      email,
      smtp_host: input.smtpHost,
      smtp_port: input.smtpPort,
      smtp_user: input.username ?? email,
      smtp_password_enc: this.secrets.encrypt(input.password, `${id}:smtp`),
      imap_host: input.imapHost,
      imap_port: input.imapPort,
      imap_user: input.username ?? email,
      imap_password_enc: this.secrets.encrypt(input.imapPassword ?? input.password, `${id}:imap`),
      status: 'active',
      status_reason: null,
      created_at: now,
      updated_at: now,
    };
    if ((await this.store.mailboxes(this.db)).some((m) => m.email === email))
      throw conflict(`The pool already has a mailbox ${email}.`, [detail('email', 'already in the pool', 'duplicate')]);
    await this.store.insertMailbox(this.db, row);
    return row;
  }

  mailboxes(): Promise<PoolMailboxRow[]> {
    return this.store.mailboxes(this.db);
  }

  async removeMailbox(idOrEmail: string): Promise<void> {
    if ((await this.store.deleteMailbox(this.db, idOrEmail)) === 0) throw notFound(`No pool mailbox ${idOrEmail}.`);
  }

  /** An operator excludes an account from the pool for good (`banned`, reason `banned_by_operator`). */
  async ban(accountId: string, why: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      if (!(await this.accounts.findAnyAccount(trx, accountId))) throw notFound(`No email account ${accountId}.`);
      await this.accounts.stopWarmup(trx, accountId, 'banned', { code: 'banned_by_operator', message: why });
    });
  }

  // --- the summary ---

  async summary(
    workspace: ZonedWorkspace,
    query: { accountId: string; startDate?: string; endDate?: string },
  ): Promise<Schemas['WarmupAnalyticsSummary']> {
    const range = resolveRange(query, workspace.timezone, this.clock.now());
    const account = await this.accounts.get(workspace, query.accountId);
    const from = startOfLocalDay(workspace.timezone, new Date(`${range.startDate}T12:00:00Z`));
    const to = startOfLocalDay(workspace.timezone, new Date(`${addDays(range.endDate, 1)}T12:00:00Z`));
    const [rows, health] = await Promise.all([
      this.store.dailyCounts(this.db, account.id, from, to, workspace.timezone),
      this.healthScores(this.db, [account.id]),
    ]);
    const zero = (): Counts => ({
      sent: 0,
      received: 0,
      landedInbox: 0,
      landedSpam: 0,
      rescued: 0,
      replied: 0,
      bounced: 0,
    });
    const byDay = new Map<string, Counts>();
    const totals = zero();
    for (const r of rows) {
      const counts = byDay.get(r.day) ?? zero();
      counts[r.metric] += r.n;
      totals[r.metric] += r.n;
      byDay.set(r.day, counts);
    }
    return {
      accountId: account.id,
      email: account.email,
      startDate: range.startDate,
      endDate: range.endDate,
      timezone: range.timezone,
      warmup: account.warmup,
      sentToday: account.warmupSentToday,
      totals,
      graph: range.days.map((date) => ({ date, ...(byDay.get(date) ?? zero()) })),
      health: health.get(account.id)!,
    };
  }

  // --- sending ---

  /** The sender job: one pass; how many warm-up emails it sent. */
  readonly sender = { runOnce: () => this.runSend(), backlog: () => this.store.sendBacklog(this.db, this.clock.now()) };
  /** The reader job: one pass; how many mailboxes it read. */
  readonly reader = {
    runOnce: () => this.runRead(),
    backlog: () => this.store.readBacklog(this.db, this.clock.now(), this.expectedSince()),
  };

  /** Warm-up mail not seen this long after it was sent is given up for lost: its mailbox is no longer read for it. */
  private expectedSince(): Date {
    return new Date(this.clock.now().getTime() - EXPECT_DAYS * DAY_MS);
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

  /** Warm-up emails (answers included) each account sent or is sending since `since`. */
  async sentSince(db: Executor, accountIds: string[], since: Date): Promise<Map<string, number>> {
    const counts = await this.store.sentSince(db, accountIds, since);
    return new Map([...counts].map(([id, n]) => [id, n.all]));
  }

  async runSend(): Promise<number> {
    const now = this.clock.now();
    const [, pool] = await Promise.all([
      this.store.expireSending(this.db, new Date(now.getTime() - SENDING_LEASE_MS)),
      this.poolMembers(this.db),
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
      const content = firstMessage(this.key(), messageId, row.last_subject);
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
    const login = member ? this.memberLogin(member, 'smtp') : await this.loginOf(this.db, senderId, 'smtp');
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
      const imap = member ? this.memberLogin(member, 'imap') : await this.loginOf(this.db, senderId, 'imap');
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
        await this.loginFailed(trx, message.sender_id, outcome.response);
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

  /** A refused login: the account goes to connectionError (out of the pool until it works), a mailbox to loginFailed. */
  private async loginFailed(trx: Executor, memberId: string, reason: string): Promise<void> {
    const mailbox = await this.store.mailbox(trx, memberId);
    if (mailbox) {
      await this.store.setMailboxStatus(trx, memberId, 'loginFailed', reason.slice(0, 500), this.clock.now());
      return;
    }
    const change = await this.mailAccess.markConnectionError(trx, memberId, reason);
    if (change) {
      await this.events.record(trx, {
        workspaceId: change.workspaceId,
        type: 'account.statusChanged',
        data: {
          accountId: change.accountId,
          email: change.email,
          previous: change.previous,
          status: change.status,
          reason: change.reason,
        },
      });
    }
  }

  // --- reading ---

  async runRead(): Promise<number> {
    const now = this.clock.now();
    const members = (await this.poolMembers(this.db)).filter((m) => m.inPool);
    if (members.length === 0) return 0;
    // One statement (UPDATE of rows selected FOR UPDATE SKIP LOCKED): atomic without a transaction around it.
    const claimed = await this.store.claimDueReaders(
      this.db,
      members.map((m) => m.id),
      now,
      this.expectedSince(),
      this.settings.readBatch,
      READ_LEASE_MS,
    );
    if (claimed.length === 0) return 0;
    // What each mailbox may hold, looked up once for the run (not once per session).
    const expected = new Map<string, Map<string, ExpectedRow>>(claimed.map((c) => [c.member_id, new Map()]));
    for (const row of await this.store.expectedMail(
      this.db,
      claimed.map((c) => c.member_id),
      this.expectedSince(),
    ))
      expected.get(row.recipient_id)!.set(row.message_id, row);
    const byId = new Map(members.map((m) => [m.id, m]));
    const senders = new Set<string>();
    await eachAtOnce(claimed, this.settings.readConcurrency, (next) =>
      this.readMember(next, byId, expected.get(next.member_id)!, senders),
    );
    await this.protectFromSpam([...senders]);
    return claimed.length;
  }

  private async readMember(
    member: MemberRow,
    pool: Map<string, Member>,
    expected: Map<string, ExpectedRow>,
    senders: Set<string>,
  ): Promise<void> {
    const patch: Partial<MemberRow> = {
      read_claimed_until: null,
      next_read_at: new Date(this.clock.now().getTime() + this.settings.readIntervalMs),
    };
    try {
      const login = this.memberLogin(pool.get(member.member_id)!, 'imap');
      if (!login) return;
      await this.mail.withMailbox(login, async (session) => {
        const junk = await session.spamFolder();
        if (junk) {
          const done = await this.readFolder(
            session,
            junk,
            'spam',
            member.junk_uid_validity,
            Number(member.junk_last_uid),
            { pool, expected, senders },
          );
          Object.assign(patch, { junk_uid_validity: done.uidValidity, junk_last_uid: done.lastUid });
        }
        const done = await this.readFolder(
          session,
          'INBOX',
          'inbox',
          member.inbox_uid_validity,
          Number(member.inbox_last_uid),
          { pool, expected, senders },
        );
        Object.assign(patch, {
          inbox_uid_validity: done.uidValidity,
          inbox_last_uid: done.lastUid,
          read_failures: 0,
          last_error: null,
        });
      });
    } catch (err) {
      const message = err instanceof MailboxError ? err.message : `IMAP read failed: ${(err as Error).message}`;
      this.logger.warn({ memberId: member.member_id, err: message }, 'warm-up: mailbox read failed');
      Object.assign(patch, { read_failures: member.read_failures + 1, last_error: message.slice(0, 1000) });
      if (err instanceof MailboxError && err.permanent)
        await this.db.transaction((trx) => this.loginFailed(trx, member.member_id, message));
    } finally {
      await this.store.updateMember(this.db, member.member_id, patch);
    }
  }

  /**
   * Looks at the folder's messages after the checkpoint (their Message-ID header only: a 20 MB or malformed
   * message costs no more than another and is passed over), and handles the warm-up mail among them (the
   * `expected` mail of this mailbox); `senders` collects whose mail was seen.
   */
  private async readFolder(
    session: MailboxSession,
    path: string,
    where: 'inbox' | 'spam',
    uidValidity: string | null,
    lastUid: number,
    {
      pool,
      expected,
      senders,
    }: { pool: Map<string, Member>; expected: Map<string, ExpectedRow>; senders: Set<string> },
  ) {
    const box = await session.select(path);
    let last = box.uidValidity === uidValidity ? lastUid : 0;
    // Nothing new since the checkpoint: no search needed.
    if (box.exists === 0 || (box.uidNext > 0 && box.uidNext <= last + 1))
      return { uidValidity: box.uidValidity, lastUid: last };
    const uids = (await session.search({ uid: `${last + 1}:*` }))
      .filter((u) => u > last)
      .slice(0, this.settings.messagesPerRead);
    if (uids.length === 0) return { uidValidity: box.uidValidity, lastUid: last };
    const ids = new Map<string, number>();
    for (const head of await session.fetchHeaders(uids, ['message-id'])) {
      const id = headerMessageId(head.headers);
      if (id) ids.set(id, head.uid);
    }
    const found = [...ids.keys()].flatMap((id) => expected.get(id) ?? []);
    const now = this.clock.now();
    const read = found.map((m) => ids.get(m.message_id)!);
    const flagged = read.filter(() => randomInt(0, 100) < this.settings.flagPercent);
    for (const m of found) senders.add(m.sender_id);
    if (found.length) {
      const replies =
        where === 'inbox'
          ? await this.answersTo(
              found.filter((m) => m.kind === 'first'),
              pool,
              now,
            )
          : [];
      const markSeen = (db: Executor) =>
        this.store.markSeen(
          db,
          found.map((m) => m.id),
          where,
          now,
        );
      // Seen and answered together, or neither.
      if (replies.length) {
        await this.db.transaction(async (trx) => {
          await markSeen(trx);
          await this.store.insertReplies(trx, replies);
        });
      } else {
        await markSeen(this.db);
      }
    }
    await session.addFlags(read, ['\\Seen']);
    await session.addFlags(flagged, ['\\Flagged']);
    if (where === 'spam') {
      // The rescue: out of spam into INBOX, where the INBOX pass of this read archives it.
      await session.move(read, 'INBOX');
      await this.store.markRescued(
        this.db,
        found.map((m) => m.id),
        now,
      );
    } else if (read.length) {
      await session.ensureFolder(ARCHIVE_FOLDER);
      await session.move(read, ARCHIVE_FOLDER);
    }
    last = Math.max(last, ...uids);
    return { uidValidity: box.uidValidity, lastUid: last };
  }

  /** The answers to these emails, to each sender's reply rate, due after a human-like delay (the sender job sends them). */
  private async answersTo(firsts: ExpectedRow[], pool: Map<string, Member>, now: Date): Promise<WarmupMessageRow[]> {
    const replies: WarmupMessageRow[] = [];
    for (const m of firsts) {
      const member = pool.get(m.sender_id);
      // A sender out of the pool now (paused meanwhile) is looked up.
      const sender = member
        ? member.kind === 'account'
          ? member.row
          : undefined
        : await this.accounts.findAnyAccount(this.db, m.sender_id);
      if (!sender || randomInt(0, 100) >= sender.warmup_reply_rate_percent) continue;
      const id = newId();
      const messageId = `${id}@${domainOf(m.recipient_email).toLowerCase()}`;
      const content = replyMessage(this.key(), messageId);
      const [lo, hi] = this.settings.replyDelayMinutes;
      replies.push({
        id,
        message_id: messageId,
        kind: 'reply',
        parent_id: m.id,
        sender_id: m.recipient_id,
        recipient_id: m.sender_id,
        sender_email: m.recipient_email,
        recipient_email: m.sender_email,
        subject: replySubject(m.subject),
        text: content.text,
        html: content.html,
        in_reply_to: m.message_id,
        references: m.message_id,
        status: 'scheduled',
        status_reason: null,
        send_at: new Date(now.getTime() + randomInt(lo * 60_000, hi * 60_000 + 1)),
        sent_at: null,
        landed: null,
        seen_at: null,
        rescued_at: null,
        replied_at: null,
        created_at: now,
      });
    }
    return replies;
  }

  /** Pauses senders whose mail landed in spam more often than in the inbox over the last 7 days. */
  private async protectFromSpam(senderIds: string[]): Promise<void> {
    if (senderIds.length === 0) return;
    const health = await this.healthScores(this.db, senderIds);
    for (const [id, h] of health) {
      if (h.landedInbox + h.landedSpam < this.settings.spamMinSeen || h.landedSpam <= h.landedInbox) continue;
      await this.db.transaction((trx) =>
        this.accounts.stopWarmup(trx, id, 'paused', {
          code: 'spam_placement',
          message: `${h.landedSpam} of the last 7 days' ${h.landedInbox + h.landedSpam} warm-up emails landed in spam (health ${h.score}%).`,
        }),
      );
    }
  }
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachAtOnce<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
}

/** A refusal that is the partner's (a full mailbox, a temporary refusal), not a sign against the sender. */
function partnerRefusal(response: string): boolean {
  return /^\s*4\d\d\b|\b(452|552)\b|\b[45]\.2\.2\b|mailbox full|quota/i.test(response);
}
