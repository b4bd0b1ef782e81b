/**
 * The warm-up tables: pool-only mailboxes, each member's pace and reading checkpoint (warmup_members), and one
 * row per warm-up email (warmup_messages). Members are accounts (email_accounts ids) or pool-only mailboxes;
 * the ids never collide (both UUIDs), so a member id alone names either.
 */
import type { Knex } from 'knex';
import type { Executor } from '../../db';
import { backlogOf, type Backlog } from '../../telemetry';

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

  async setMailboxStatus(db: Executor, id: string, status: PoolMailboxRow['status'], reason: string | null, at: Date): Promise<void> {
    await db('warmup_mailboxes').where({ id }).update({ status, status_reason: reason, updated_at: at });
  }

  // --- members ---

  /** Adds a member row for each id that has none (first send and read soon after joining). */
  async ensureMembers(db: Executor, rows: { member_id: string; next_send_at: Date; next_read_at: Date }[]): Promise<void> {
    if (rows.length) await db('warmup_members').insert(rows).onConflict('member_id').ignore();
  }

  /** Members among `ids` due to send, locked; another worker skips them (SKIP LOCKED). */
  async claimDueSenders(db: Executor, ids: string[], now: Date, limit: number): Promise<MemberRow[]> {
    if (ids.length === 0) return [];
    return db('warmup_members').whereIn('member_id', ids).andWhere('next_send_at', '<=', now).orderBy('next_send_at').limit(limit).forUpdate().skipLocked();
  }

  async updateMember(db: Executor, memberId: string, patch: Partial<MemberRow>): Promise<void> {
    await db('warmup_members').where({ member_id: memberId }).update(patch);
  }

  async members(db: Executor, ids: string[]): Promise<MemberRow[]> {
    if (ids.length === 0) return [];
    return db('warmup_members').whereIn('member_id', ids);
  }

  /** Claims mailboxes of `ids` due for reading: marked for `leaseMs` before anyone connects. */
  async claimDueReaders(db: Executor, ids: string[], now: Date, limit: number, leaseMs: number): Promise<MemberRow[]> {
    if (ids.length === 0) return [];
    const due = db('warmup_members')
      .whereIn('member_id', ids)
      .andWhere('next_read_at', '<=', now)
      .andWhere((q) => {
        q.whereNull('read_claimed_until').orWhere('read_claimed_until', '<', now);
      })
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
  readBacklog(db: Executor, now: Date): Promise<Backlog> {
    const due = db('warmup_members')
      .where('next_read_at', '<=', now)
      .andWhere((q) => {
        q.whereNull('read_claimed_until').orWhere('read_claimed_until', '<', now);
      });
    return backlogOf(due, 'next_read_at');
  }

  // --- messages ---

  async insertMessage(db: Executor, row: WarmupMessageRow): Promise<void> {
    await db('warmup_messages').insert(row);
  }

  /** Inserts an answer unless the message already has one (another reader was first); true when inserted. */
  async insertReply(db: Executor, row: WarmupMessageRow): Promise<boolean> {
    const inserted = await db('warmup_messages').insert(row).onConflict(db.raw("(parent_id) WHERE kind = 'reply'")).ignore().returning('id');
    return inserted.length > 0;
  }

  /** Claims due answers: `sending` from here on, so one worker sends each. */
  async claimDueReplies(db: Executor, now: Date, limit: number): Promise<WarmupMessageRow[]> {
    const due = db('warmup_messages').where({ status: 'scheduled' }).andWhere('send_at', '<=', now).orderBy('send_at').limit(limit).forUpdate().skipLocked().select('id');
    return db('warmup_messages').whereIn('id', due).update({ status: 'sending', sent_at: now }).returning('*');
  }

  async finishMessage(db: Executor, id: string, patch: { status: MessageStatus; status_reason: string | null }): Promise<void> {
    await db('warmup_messages').where({ id, status: 'sending' }).update(patch);
  }

  /** Messages left `sending` since before `before` (a worker stopped): `unknown`, never sent again. */
  async expireSending(db: Executor, before: Date): Promise<number> {
    return db('warmup_messages').where({ status: 'sending' }).andWhere('sent_at', '<', before).update({ status: 'unknown', status_reason: 'The worker stopped before the SMTP outcome was recorded.' });
  }

  async byMessageIds(db: Executor, recipientId: string, messageIds: string[]): Promise<WarmupMessageRow[]> {
    if (messageIds.length === 0) return [];
    return db('warmup_messages').where({ recipient_id: recipientId }).whereIn('message_id', messageIds);
  }

  async message(db: Executor, id: string): Promise<WarmupMessageRow | undefined> {
    return db('warmup_messages').where({ id }).first<WarmupMessageRow | undefined>();
  }

  async markSeen(db: Executor, id: string, landed: 'inbox' | 'spam', at: Date): Promise<void> {
    await db('warmup_messages').where({ id }).whereNull('seen_at').update({ landed, seen_at: at });
  }

  async markRescued(db: Executor, id: string, at: Date): Promise<void> {
    await db('warmup_messages').where({ id }).whereNull('rescued_at').update({ rescued_at: at });
  }

  async markReplied(db: Executor, id: string, at: Date): Promise<void> {
    await db('warmup_messages').where({ id }).whereNull('replied_at').update({ replied_at: at });
  }

  /** Warm-up emails each of `senderIds` attempted since `since` (all kinds, or first emails only). */
  async sentSince(db: Executor, senderIds: string[], since: Date, kind?: 'first'): Promise<Map<string, number>> {
    if (senderIds.length === 0) return new Map();
    const q = db('warmup_messages').whereIn('sender_id', senderIds).whereIn('status', ATTEMPTED).andWhere('sent_at', '>=', since);
    if (kind) q.andWhere({ kind });
    const rows: { sender_id: string; n: number }[] = await q.groupBy('sender_id').select('sender_id', db.raw('count(*)::int AS n'));
    return new Map(rows.map((r) => [r.sender_id, r.n]));
  }

  /** First emails each sender wrote to each partner since `since`: spreads mail over partners. */
  async partnerCounts(db: Executor, senderId: string, since: Date): Promise<Map<string, number>> {
    const rows: { recipient_id: string; n: number }[] = await db('warmup_messages')
      .where({ sender_id: senderId, kind: 'first' })
      .andWhere('created_at', '>=', since)
      .groupBy('recipient_id')
      .select('recipient_id', db.raw('count(*)::int AS n'));
    return new Map(rows.map((r) => [r.recipient_id, r.n]));
  }

  /** Where partners found each sender's mail since `since`. */
  async placement(db: Executor, senderIds: string[], since: Date): Promise<Map<string, { inbox: number; spam: number }>> {
    if (senderIds.length === 0) return new Map();
    const rows: { sender_id: string; inbox: number; spam: number }[] = await db('warmup_messages')
      .whereIn('sender_id', senderIds)
      .andWhere('seen_at', '>=', since)
      .groupBy('sender_id')
      .select('sender_id', db.raw("(count(*) FILTER (WHERE landed = 'inbox'))::int AS inbox"), db.raw("(count(*) FILTER (WHERE landed = 'spam'))::int AS spam"));
    return new Map(rows.map((r) => [r.sender_id, { inbox: r.inbox, spam: r.spam }]));
  }

  /** Per local day, the summary's counts of one member between two instants (each by the time it happened). */
  async dailyCounts(db: Executor, memberId: string, from: Date, to: Date, timezone: string): Promise<DayCount[]> {
    const day = (column: string) => db.raw(`to_char(${column} AT TIME ZONE ?, 'YYYY-MM-DD')`, [timezone]);
    const count = (metric: DayCount['metric'], column: string, where: (q: Knex.QueryBuilder) => void) => {
      const q = db('warmup_messages').andWhere(column, '>=', from).andWhere(column, '<', to);
      where(q);
      return q.groupByRaw('2').select(db.raw('? AS metric', [metric]), day(column).wrap('', ' AS day'), db.raw('count(*)::int AS n'));
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
    const rows = await Promise.all(parts);
    return rows.flat() as DayCount[];
  }
}
