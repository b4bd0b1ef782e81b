/**
 * The reader job (runOnce): mailboxes expecting warm-up mail are claimed for a lease, then read over IMAP in one
 * session each: warm-up mail (recognised by its Message-ID header in the pool's record) found in the spam folder
 * is recorded as spam, marked read and moved to INBOX (the rescue); in INBOX it is recorded (inbox unless
 * rescued), marked read, some flagged, answered to the sender's reply rate after a human delay, and archived
 * into the `Warmup` folder.
 *
 * Spam for most of the last 7 days' placement pauses the sender (`spam_placement`).
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { domainOf } from '../../platform/email-address';
import { newId } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import type { AccountService } from '../account';
import { type MailService, MailboxError, type MailboxSession, replySubject } from '../mail';
import { replyMessage } from './content';
import { eachAtOnce, type WarmupSettings } from './jobs';
import { DAY_MS, type Member, type WarmupPool } from './pool';
import type { ExpectedRow, MemberRow, WarmupMessageRow, WarmupStore } from './store';

const ARCHIVE_FOLDER = 'Warmup';
const READ_LEASE_MS = 5 * 60_000;
const EXPECT_DAYS = 2;

/** The Message-ID of a raw message's header block, without angle brackets; null when it has none. */
export function headerMessageId(source: Buffer): string | null {
  const text = source.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const head = (end >= 0 ? text.slice(0, end) : text).replace(/\r?\n[ \t]+/g, ' ');
  const match = /^message-id:\s*<([^>\s]+)>/im.exec(head);
  return match ? match[1] : null;
}

/** What WarmupReader is built from, by name. */
interface WarmupReaderDeps {
  db: Db;
  store: WarmupStore;
  pool: Pick<WarmupPool, 'members' | 'memberLogin' | 'loginFailed' | 'healthScores'>;
  accounts: Pick<AccountService, 'findAnyAccount' | 'stopWarmup'>;
  mail: Pick<MailService, 'withMailbox'>;
  /** The per-deployment key of the marker. */
  markerKey: () => Buffer;
  clock: Clock;
  logger: Logger;
  settings: Omit<WarmupSettings, 'sendBatch' | 'sendConcurrency'>;
}

export class WarmupReader {
  private readonly db: Db;
  private readonly store: WarmupStore;
  private readonly pool: Pick<WarmupPool, 'members' | 'memberLogin' | 'loginFailed' | 'healthScores'>;
  private readonly accounts: Pick<AccountService, 'findAnyAccount' | 'stopWarmup'>;
  private readonly mail: Pick<MailService, 'withMailbox'>;
  private readonly markerKey: () => Buffer;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly settings: Omit<WarmupSettings, 'sendBatch' | 'sendConcurrency'>;

  constructor({ db, store, pool, accounts, mail, markerKey, clock, logger, settings }: WarmupReaderDeps) {
    this.db = db;
    this.store = store;
    this.pool = pool;
    this.accounts = accounts;
    this.mail = mail;
    this.markerKey = markerKey;
    this.clock = clock;
    this.logger = logger;
    this.settings = settings;
  }

  /** Mailboxes due to be read, for the metrics. */
  backlog() {
    return this.store.readBacklog(this.db, this.clock.now(), this.expectedSince());
  }

  /** Warm-up mail not seen this long after it was sent is given up for lost: its mailbox is no longer read for it. */
  private expectedSince(): Date {
    return new Date(this.clock.now().getTime() - EXPECT_DAYS * DAY_MS);
  }

  /** One pass: how many mailboxes it read. */
  async runOnce(): Promise<number> {
    const now = this.clock.now();
    const members = (await this.pool.members(this.db)).filter((m) => m.inPool);
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
      const login = this.pool.memberLogin(pool.get(member.member_id)!, 'imap');
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
        await this.db.transaction((trx) => this.pool.loginFailed(trx, member.member_id, message));
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
      const content = replyMessage(this.markerKey(), messageId);
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
    const health = await this.pool.healthScores(this.db, senderIds);
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
