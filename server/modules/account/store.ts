/** Plain rows for email accounts. Every query is scoped by workspace. */
import type { Executor } from '../../db';

export interface AccountRow {
  id: string;
  workspace_id: string;
  email: string;
  provider: 'google' | 'microsoft' | 'smtp';
  status: 'active' | 'paused' | 'connectionError' | 'sendingError';
  /** What failed, for connectionError / sendingError. */
  status_reason?: string | null;
  daily_limit: number;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_user: string | null;
  smtp_password_enc: string | null;
  imap_host: string | null;
  imap_port: number | null;
  imap_user: string | null;
  imap_password_enc: string | null;
  warmup_enabled: boolean;
  warmup_status: 'active' | 'paused' | 'banned';
  warmup_daily_limit: number;
  warmup_increase_per_day: number;
  warmup_reply_rate_percent: number;
  warmup_window_from: string;
  warmup_window_to: string;
  warmup_weekdays_only: boolean;
  /** Why the warm-up is paused, banned or sends nothing (WarmupReason.code), and the words. */
  warmup_reason_code: string | null;
  warmup_reason_message: string | null;
  /** Day 1 of the ramp. */
  warmup_started_at: Date | null;
  /** The chosen tracking domain (links use it while it is verified). */
  tracking_domain_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export type WarmupColumns = Partial<
  Pick<
    AccountRow,
    | 'warmup_enabled'
    | 'warmup_status'
    | 'warmup_daily_limit'
    | 'warmup_increase_per_day'
    | 'warmup_reply_rate_percent'
    | 'warmup_window_from'
    | 'warmup_window_to'
    | 'warmup_weekdays_only'
    | 'warmup_reason_code'
    | 'warmup_reason_message'
    | 'warmup_started_at'
  >
>;

export class AccountStore {
  async find(
    db: Executor,
    workspaceId: string,
    id: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<AccountRow | undefined> {
    const query = db<AccountRow>('email_accounts').where({ workspace_id: workspaceId, id }).first();
    if (options.forUpdate) query.forUpdate();
    return query;
  }

  /** `lock`: FOR NO KEY UPDATE in id order (rows referencing them can still be inserted meanwhile). */
  async findMany(
    db: Executor,
    workspaceId: string,
    ids: string[],
    options: { lock?: boolean } = {},
  ): Promise<AccountRow[]> {
    const query = db<AccountRow>('email_accounts').where('workspace_id', workspaceId).whereIn('id', ids);
    return options.lock ? query.orderBy('id').forNoKeyUpdate() : query;
  }

  async list(
    db: Executor,
    workspaceId: string,
    page: { limit: number; skip: number; status?: string; id?: string },
  ): Promise<{ rows: AccountRow[]; total: number }> {
    const filtered = () => {
      const q = db<AccountRow>('email_accounts').where('workspace_id', workspaceId);
      if (page.status) q.andWhere('status', page.status);
      if (page.id) q.andWhere('id', page.id);
      return q;
    };
    const rows = await filtered()
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(page.limit)
      .offset(page.skip);
    const [{ count }] = await filtered().count<{ count: string | number }[]>({ count: '*' });
    return { rows, total: Number(count) };
  }

  async emailTaken(db: Executor, workspaceId: string, email: string): Promise<boolean> {
    const row = await db<AccountRow>('email_accounts')
      .where('workspace_id', workspaceId)
      .whereRaw('lower(email) = lower(?)', [email])
      .first('id');
    return row !== undefined;
  }

  async count(db: Executor, workspaceId: string): Promise<number> {
    const [{ count }] = await db('email_accounts')
      .where('workspace_id', workspaceId)
      .count<{ count: string | number }[]>({ count: '*' });
    return Number(count);
  }

  /** The plan's cap on email accounts, locking the workspace row so concurrent connects count in turn. */
  async insert(db: Executor, row: AccountRow): Promise<void> {
    await db('email_accounts').insert(row);
  }

  async update(
    db: Executor,
    workspaceId: string,
    id: string,
    changes: WarmupColumns & Partial<Pick<AccountRow, 'tracking_domain_id'>> & { updated_at: Date },
  ): Promise<AccountRow> {
    const [row] = await db('email_accounts')
      .where({ workspace_id: workspaceId, id })
      .update(changes)
      .returning<AccountRow[]>('*');
    return row;
  }

  /** Deletes the account; its campaign links go with it (ON DELETE CASCADE), its events keep a null account. */
  async delete(db: Executor, workspaceId: string, id: string): Promise<void> {
    await db('email_accounts').where({ workspace_id: workspaceId, id }).delete();
  }

  // --- mail connections (inbox reader; the sending engine's SMTP side uses the same columns) ---

  /** Accounts with an IMAP login that are not in connectionError: the mailboxes the reader reads. */
  async readableImapAccounts(db: Executor): Promise<{ id: string; workspace_id: string }[]> {
    return db('email_accounts')
      .whereNotNull('imap_host')
      .whereNotNull('imap_password_enc')
      .whereNot('status', 'connectionError')
      .select('id', 'workspace_id');
  }

  async findAny(db: Executor, id: string, options: { forUpdate?: boolean } = {}): Promise<AccountRow | undefined> {
    const query = db<AccountRow>('email_accounts').where({ id }).first();
    if (options.forUpdate) query.forUpdate();
    return query;
  }

  async setStatus(
    db: Executor,
    id: string,
    status: AccountRow['status'],
    reason: string | null,
    at: Date,
  ): Promise<void> {
    await db('email_accounts').where({ id }).update({ status, status_reason: reason, updated_at: at });
  }

  /** Accounts with warm-up enabled and running (any workspace): the accounts of the warm-up pool. */
  async warmupEnabled(db: Executor): Promise<AccountRow[]> {
    return db('email_accounts').where({ warmup_enabled: true, warmup_status: 'active' }).orderBy('id');
  }

  /** Sets warm-up columns of any workspace's account (the warm-up worker's protection and notes). */
  async updateWarmup(db: Executor, id: string, changes: WarmupColumns & { updated_at: Date }): Promise<void> {
    await db('email_accounts').where({ id }).update(changes);
  }

  /** How many of `ids` are the workspace's accounts in status active. */
  async countActive(db: Executor, workspaceId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const row = await db('email_accounts')
      .where({ workspace_id: workspaceId, status: 'active' })
      .whereIn('id', ids)
      .first<{ n: number } | undefined>(db.raw('count(*)::int AS n'));
    return row?.n ?? 0;
  }
}
