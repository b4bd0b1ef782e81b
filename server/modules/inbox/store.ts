/** mailbox_checkpoints: where the reader is in each account's mailbox, and who is reading it now. */
import type { Executor } from '../../db';
import { backlogOf, type Backlog } from '../../observability/telemetry';

export interface CheckpointRow {
  account_id: string;
  mailbox: string;
  workspace_id: string;
  uid_validity: string | null;
  last_uid: number;
  claimed_until: Date | null;
  claimed_by: string | null;
  last_read_at: Date | null;
  failures: number;
  last_error: string | null;
  stuck_uid: number | null;
  stuck_count: number;
  updated_at: Date;
}

const fromDb = (row: CheckpointRow): CheckpointRow => ({
  ...row,
  last_uid: Number(row.last_uid),
  stuck_uid: row.stuck_uid === null ? null : Number(row.stuck_uid),
});

export class InboxStore {
  /** Creates the missing checkpoints of these accounts' mailboxes (nothing read yet). */
  async ensureCheckpoints(
    db: Executor,
    accounts: { id: string; workspaceId: string }[],
    mailbox: string,
    now: Date,
  ): Promise<void> {
    for (let i = 0; i < accounts.length; i += 1000) {
      const chunk = accounts.slice(i, i + 1000);
      await db('mailbox_checkpoints')
        .insert(
          chunk.map((a) => ({
            account_id: a.id,
            workspace_id: a.workspaceId,
            mailbox,
            last_uid: 0,
            failures: 0,
            updated_at: now,
          })),
        )
        .onConflict(['account_id', 'mailbox'])
        .ignore();
    }
  }

  /**
   * Mailboxes no worker holds, and the oldest last read (the worker's backlog: every mailbox is read over and
   * over, so its age is how far behind the reader is).
   */
  backlog(db: Executor, mailbox: string, now: Date): Promise<Backlog> {
    const due = db('mailbox_checkpoints')
      .where('mailbox', mailbox)
      .andWhere((w) => {
        w.whereNull('claimed_until').orWhere('claimed_until', '<', now);
      });
    return backlogOf(due, db.raw('coalesce(last_read_at, updated_at)'));
  }

  /**
   * Claims up to `limit` unclaimed (or expired) mailboxes of `accountIds`, least recently read first,
   * skipping rows another worker holds (FOR UPDATE SKIP LOCKED), and marks them claimed until `until`.
   * Run it in a short transaction of its own, before any network I/O.
   */
  async claim(
    db: Executor,
    accountIds: string[],
    mailbox: string,
    now: Date,
    until: Date,
    workerId: string,
    limit: number,
  ): Promise<CheckpointRow[]> {
    if (accountIds.length === 0) return [];
    const rows = await db<CheckpointRow>('mailbox_checkpoints')
      .where('mailbox', mailbox)
      .whereIn('account_id', accountIds)
      .andWhere((w) => {
        w.whereNull('claimed_until').orWhere('claimed_until', '<', now);
      })
      .orderByRaw('last_read_at ASC NULLS FIRST, account_id')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .select('*');
    if (rows.length === 0) return [];
    await db('mailbox_checkpoints')
      .where('mailbox', mailbox)
      .whereIn(
        'account_id',
        rows.map((r) => r.account_id),
      )
      .update({ claimed_until: until, claimed_by: workerId, updated_at: now });
    return rows.map(fromDb);
  }

  /** Moves the checkpoint after a processed message (in the message's transaction). */
  async advance(
    db: Executor,
    accountId: string,
    mailbox: string,
    uidValidity: string,
    lastUid: number,
    now: Date,
  ): Promise<void> {
    await db('mailbox_checkpoints')
      .where({ account_id: accountId, mailbox })
      .update({ uid_validity: uidValidity, last_uid: lastUid, updated_at: now });
  }

  async release(
    db: Executor,
    accountId: string,
    mailbox: string,
    workerId: string,
    result: { now: Date; error: string | null; failures: number; stuck: { uid: number; count: number } | null },
  ): Promise<void> {
    await db('mailbox_checkpoints')
      .where({ account_id: accountId, mailbox, claimed_by: workerId })
      .update({
        claimed_until: null,
        claimed_by: null,
        last_read_at: result.now,
        last_error: result.error,
        failures: result.failures,
        stuck_uid: result.stuck?.uid ?? null,
        stuck_count: result.stuck?.count ?? 0,
        updated_at: result.now,
      });
  }

  async get(db: Executor, accountId: string, mailbox: string): Promise<CheckpointRow | undefined> {
    const row = await db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId, mailbox }).first();
    return row && fromDb(row);
  }
}
