/**
 * The warm-up tables: pool-only mailboxes, each member's pace and reading checkpoint (warmup_members), and one
 * row per warm-up email (warmup_messages). Members are accounts (email_accounts ids) or pool-only mailboxes;
 * the ids never collide (both UUIDs), so a member id alone names either.
 */
import type { Knex } from 'knex';
import { queryAll, type Executor } from '../../db';
import { backlogOf, type Backlog } from '../../observability/telemetry';

export interface PoolMailboxRow {
  id: string;
  email: string;
  smtp_host: string;
  smtp_port: number;
  smtp_user: string;
  smtp_password_enc: string;
  imap_host: string;
  imap_port: number;
  imap_user: string;
  imap_password_enc: string;
  status: 'active' | 'loginFailed';
  status_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  member_id: string;
  next_send_at: Date;
  next_read_at: Date;
  read_claimed_until: Date | null;
  inbox_uid_validity: string | null;
  inbox_last_uid: number | string;
  junk_uid_validity: string | null;
  junk_last_uid: number | string;
  read_failures: number;
  last_error: string | null;
  skip_until: Date | null;
  last_subject: string | null;
}

export type MessageStatus = 'scheduled' | 'sending' | 'sent' | 'bounced' | 'failed' | 'unknown';

/** When a member sends next, and (when it just wrote one) its last subject. */
export interface Pace {
  member_id: string;
  next_send_at: Date;
  last_subject: string | null;
}

export interface WarmupMessageRow {
  id: string;
  message_id: string;
  kind: 'first' | 'reply';
  parent_id: string | null;
  sender_id: string;
  recipient_id: string;
  sender_email: string;
  recipient_email: string;
  subject: string;
  text: string;
  html: string | null;
  in_reply_to: string | null;
  references: string | null;
  status: MessageStatus;
  status_reason: string | null;
  send_at: Date;
  sent_at: Date | null;
  landed: 'inbox' | 'spam' | null;
  seen_at: Date | null;
  rescued_at: Date | null;
  replied_at: Date | null;
  created_at: Date;
}

/** A warm-up email as a reader needs it: to recognise it, record where it landed and answer it. */
export type ExpectedRow = Pick<
  WarmupMessageRow,
  'id' | 'message_id' | 'kind' | 'sender_id' | 'recipient_id' | 'sender_email' | 'recipient_email' | 'subject'
>;

/** Statuses that count as a send attempt that left (or may have left) the account. */
const ATTEMPTED = ['sending', 'sent', 'bounced', 'unknown'];

export interface DayCount {
  metric: 'sent' | 'received' | 'landedInbox' | 'landedSpam' | 'rescued' | 'replied' | 'bounced';
  day: string;
  n: number;
}

export class WarmupStore {
  // --- pool-only mailboxes ---

  async insertMailbox(db: Executor, row: PoolMailboxRow): Promise<void> {
    await db('warmup_mailboxes').insert(row);
  }

  async mailboxes(db: Executor): Promise<PoolMailboxRow[]> {
    return db('warmup_mailboxes').orderBy('email');
  }

  async mailbox(db: Executor, id: string): Promise<PoolMailboxRow | undefined> {
    return db('warmup_mailboxes').where({ id }).first<PoolMailboxRow | undefined>();
  }

  async deleteMailbox(db: Executor, idOrEmail: string): Promise<number> {
    const q = db('warmup_mailboxes');
    if (/^[0-9a-f-]{36}$/i.test(idOrEmail)) q.where('id', idOrEmail);
    else q.where('email', idOrEmail.toLowerCase());
    return q.delete();
  }

  async setMailboxStatus(
    db: Executor,
    id: string,
    status: PoolMailboxRow['status'],
    reason: string | null,
    at: Date,
  ): Promise<void> {
    await db('warmup_mailboxes').where({ id }).update({ status, status_reason: reason, updated_at: at });
  }

  // --- members ---

  /** Adds a member row for each id that has none (first send and read soon after joining). */
  async ensureMembers(
    db: Executor,
    rows: { member_id: string; next_send_at: Date; next_read_at: Date }[],
  ): Promise<void> {
    if (rows.length) await db('warmup_members').insert(rows).onConflict('member_id').ignore();
  }

  /** Members among `ids` due to send, locked; another worker skips them (SKIP LOCKED). */
  async claimDueSenders(db: Executor, ids: string[], now: Date, limit: number): Promise<MemberRow[]> {
    if (ids.length === 0) return [];
    return db('warmup_members')
      .whereIn('member_id', ids)
      .andWhere('next_send_at', '<=', now)
      .orderBy('next_send_at')
      .limit(limit)
      .forUpdate()
      .skipLocked();
  }

  /** One run's new paces in one statement (a subject of null keeps the member's last one). */
  async setPaces(db: Executor, paces: Pace[]): Promise<void> {
    if (paces.length === 0) return;
    const values = paces.map(() => '(?::uuid, ?::timestamptz, ?::text)').join(', ');
    await db.raw(
      `UPDATE warmup_members AS m SET next_send_at = v.next_send_at, last_subject = COALESCE(v.last_subject, m.last_subject)
       FROM (VALUES ${values}) AS v(member_id, next_send_at, last_subject) WHERE m.member_id = v.member_id`,
      paces.flatMap((p) => [p.member_id, p.next_send_at, p.last_subject]),
    );
  }

  async updateMember(db: Executor, memberId: string, patch: Partial<MemberRow>): Promise<void> {
    await db('warmup_members').where({ member_id: memberId }).update(patch);
  }

  /** Members skipped as partners until after `now` (they refused mail). */
  async skippedUntilAfter(db: Executor, now: Date): Promise<Set<string>> {
    return new Set(await db('warmup_members').where('skip_until', '>', now).pluck('member_id'));
  }

  /**
   * Mailboxes due to be read: their interval has passed, nobody holds them, and warm-up mail sent to them since
   * `expectedSince` has not been seen yet (a mailbox expecting nothing is not opened: only warm-up mail is
   * handled there).
   */
  private dueReaders(db: Executor, now: Date, expectedSince: Date) {
    return db('warmup_members')
      .where('next_read_at', '<=', now)
      .andWhere((q) => {
        q.whereNull('read_claimed_until').orWhere('read_claimed_until', '<', now);
      })
      .whereExists(
        db('warmup_messages')
          .whereRaw('warmup_messages.recipient_id = warmup_members.member_id')
          .whereNull('seen_at')
          .whereIn('status', ['sent', 'unknown'])
          .andWhere('sent_at', '>=', expectedSince),
      );
  }

  /** Claims mailboxes of `ids` due for reading: marked for `leaseMs` before anyone connects. */
  async claimDueReaders(
    db: Executor,
    ids: string[],
    now: Date,
    expectedSince: Date,
    limit: number,
    leaseMs: number,
  ): Promise<MemberRow[]> {
    if (ids.length === 0) return [];
    const due = this.dueReaders(db, now, expectedSince)
      .whereIn('member_id', ids)
      .orderBy('next_read_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .select('member_id');
    return db('warmup_members')
      .whereIn('member_id', due)
      .update({ read_claimed_until: new Date(now.getTime() + leaseMs) })
      .returning('*');
  }

  /** Answers due: the sender job's backlog (first emails follow each member's own pace). */
  sendBacklog(db: Executor, now: Date): Promise<Backlog> {
    return backlogOf(db('warmup_messages').where({ status: 'scheduled' }).andWhere('send_at', '<=', now), 'send_at');
  }

  /** Mailboxes due to be read: the reader job's backlog. */
  readBacklog(db: Executor, now: Date, expectedSince: Date): Promise<Backlog> {
    return backlogOf(this.dueReaders(db, now, expectedSince), 'next_read_at');
  }

  // --- messages ---

  /** One run's first emails (at most a run's send batch: one statement). */
  async insertMessages(db: Executor, rows: WarmupMessageRow[]): Promise<void> {
    if (rows.length) await db('warmup_messages').insert(rows);
  }

  /** Inserts answers, each unless its message already has one (another reader was first). */
  async insertReplies(db: Executor, rows: WarmupMessageRow[]): Promise<void> {
    if (rows.length)
      await db('warmup_messages').insert(rows).onConflict(db.raw("(parent_id) WHERE kind = 'reply'")).ignore();
  }

  /** Due answers no other worker holds, locked until the caller's transaction ends (they stay `scheduled`). */
  async lockDueReplies(db: Executor, now: Date, limit: number): Promise<WarmupMessageRow[]> {
    return db<WarmupMessageRow>('warmup_messages')
      .where({ status: 'scheduled' })
      .andWhere('send_at', '<=', now)
      .orderBy('send_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .select('*');
  }

  /** Answers locked by lockDueReplies go out: `sending` from here on, so one worker sends each. */
  async startReplies(db: Executor, ids: string[], now: Date): Promise<WarmupMessageRow[]> {
    if (ids.length === 0) return [];
    return db('warmup_messages').whereIn('id', ids).update({ status: 'sending', sent_at: now }).returning('*');
  }

  /** Answers whose sender has no room left today wait until `sendAt`. */
  async postponeReplies(db: Executor, ids: string[], sendAt: Date): Promise<void> {
    if (ids.length) await db('warmup_messages').whereIn('id', ids).update({ send_at: sendAt });
  }

  async finishMessage(
    db: Executor,
    id: string,
    patch: { status: MessageStatus; status_reason: string | null },
  ): Promise<void> {
    await this.finishMessages(db, [id], patch);
  }

  async finishMessages(
    db: Executor,
    ids: string[],
    patch: { status: MessageStatus; status_reason: string | null },
  ): Promise<void> {
    if (ids.length) await db('warmup_messages').whereIn('id', ids).andWhere({ status: 'sending' }).update(patch);
  }

  /** Messages left `sending` since before `before` (a worker stopped): `unknown`, never sent again. */
  async expireSending(db: Executor, before: Date): Promise<number> {
    return db('warmup_messages')
      .where({ status: 'sending' })
      .andWhere('sent_at', '<', before)
      .update({ status: 'unknown', status_reason: 'The worker stopped before the SMTP outcome was recorded.' });
  }

  /** Warm-up mail sent to these mailboxes since `since` (seen or not; without the bodies): what a read may find there. */
  async expectedMail(db: Executor, recipientIds: string[], since: Date): Promise<ExpectedRow[]> {
    if (recipientIds.length === 0) return [];
    return db('warmup_messages')
      .whereIn('recipient_id', recipientIds)
      .whereIn('status', ['sent', 'unknown'])
      .andWhere('sent_at', '>=', since)
      .select('id', 'message_id', 'kind', 'sender_id', 'recipient_id', 'sender_email', 'recipient_email', 'subject');
  }

  async message(db: Executor, id: string): Promise<WarmupMessageRow | undefined> {
    return db('warmup_messages').where({ id }).first<WarmupMessageRow | undefined>();
  }

  async markSeen(db: Executor, ids: string[], landed: 'inbox' | 'spam', at: Date): Promise<void> {
    if (ids.length) await db('warmup_messages').whereIn('id', ids).whereNull('seen_at').update({ landed, seen_at: at });
  }

  async markRescued(db: Executor, ids: string[], at: Date): Promise<void> {
    if (ids.length) await db('warmup_messages').whereIn('id', ids).whereNull('rescued_at').update({ rescued_at: at });
  }

  async markReplied(db: Executor, id: string, at: Date): Promise<void> {
    await db('warmup_messages').where({ id }).whereNull('replied_at').update({ replied_at: at });
  }

  /** Warm-up emails each of `senderIds` attempted since `since`: all (answers included), and first emails. */
  async sentSince(
    db: Executor,
    senderIds: string[],
    since: Date,
  ): Promise<Map<string, { all: number; first: number }>> {
    if (senderIds.length === 0) return new Map();
    const rows: { sender_id: string; all: number; first: number }[] = await db('warmup_messages')
      .whereIn('sender_id', senderIds)
      .whereIn('status', ATTEMPTED)
      .andWhere('sent_at', '>=', since)
      .groupBy('sender_id')
      .select(
        'sender_id',
        db.raw('count(*)::int AS "all"'),
        db.raw("(count(*) FILTER (WHERE kind = 'first'))::int AS first"),
      );
    return new Map(rows.map((r) => [r.sender_id, { all: r.all, first: r.first }]));
  }

  /** Per sender, first emails it wrote to each partner since `since`: spreads mail over partners. */
  async partnerCounts(db: Executor, senderIds: string[], since: Date): Promise<Map<string, Map<string, number>>> {
    const out = new Map<string, Map<string, number>>();
    if (senderIds.length === 0) return out;
    const rows: { sender_id: string; recipient_id: string; n: number }[] = await db('warmup_messages')
      .whereIn('sender_id', senderIds)
      .andWhere({ kind: 'first' })
      .andWhere('created_at', '>=', since)
      .groupBy('sender_id', 'recipient_id')
      .select('sender_id', 'recipient_id', db.raw('count(*)::int AS n'));
    for (const r of rows)
      out.set(r.sender_id, (out.get(r.sender_id) ?? new Map<string, number>()).set(r.recipient_id, r.n));
    return out;
  }

  /** Where partners found each sender's mail since `since`. */
  async placement(
    db: Executor,
    senderIds: string[],
    since: Date,
  ): Promise<Map<string, { inbox: number; spam: number }>> {
    if (senderIds.length === 0) return new Map();
    const rows: { sender_id: string; inbox: number; spam: number }[] = await db('warmup_messages')
      .whereIn('sender_id', senderIds)
      .andWhere('seen_at', '>=', since)
      .groupBy('sender_id')
      .select(
        'sender_id',
        db.raw("(count(*) FILTER (WHERE landed = 'inbox'))::int AS inbox"),
        db.raw("(count(*) FILTER (WHERE landed = 'spam'))::int AS spam"),
      );
    return new Map(rows.map((r) => [r.sender_id, { inbox: r.inbox, spam: r.spam }]));
  }

  /** Per local day, the summary's counts of one member between two instants (each by the time it happened). */
  async dailyCounts(db: Executor, memberId: string, from: Date, to: Date, timezone: string): Promise<DayCount[]> {
    const day = (column: string) => db.raw(`to_char(${column} AT TIME ZONE ?, 'YYYY-MM-DD')`, [timezone]);
    const count = (metric: DayCount['metric'], column: string, where: (q: Knex.QueryBuilder) => void) => {
      const q = db('warmup_messages').andWhere(column, '>=', from).andWhere(column, '<', to);
      where(q);
      return q
        .groupByRaw('2')
        .select(db.raw('? AS metric', [metric]), day(column).wrap('', ' AS day'), db.raw('count(*)::int AS n'));
    };
    const parts = [
      count('sent', 'sent_at', (q) => {
        q.where({ sender_id: memberId }).whereIn('status', ['sent', 'unknown', 'sending']);
      }),
      count('bounced', 'sent_at', (q) => {
        q.where({ sender_id: memberId, status: 'bounced' });
      }),
      count('received', 'seen_at', (q) => {
        q.where({ recipient_id: memberId });
      }),
      count('landedInbox', 'seen_at', (q) => {
        q.where({ sender_id: memberId, landed: 'inbox' });
      }),
      count('landedSpam', 'seen_at', (q) => {
        q.where({ sender_id: memberId, landed: 'spam' });
      }),
      count('rescued', 'rescued_at', (q) => {
        q.where({ sender_id: memberId });
      }),
      count('replied', 'replied_at', (q) => {
        q.where({ sender_id: memberId });
      }),
    ];
    const rows = await queryAll(
      db,
      parts.map((part) => () => part),
    );
    return rows.flat() as DayCount[];
  }
}
