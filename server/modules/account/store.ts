/** Plain rows for email accounts. Every query is scoped by workspace. */
import type { Executor } from '../../db';

export interface AccountRow {
  id: string;
  workspace_id: string;
  email: string;
  provider: 'google' | 'microsoft' | 'smtp';
  status: 'active' | 'paused' | 'connectionError' | 'sendingError' | 'reconnectRequired';
  /** How it logs in: its SMTP/IMAP passwords, or its OAuth grant (the mail module's `mailbox_oauth_grants`). */
  auth_type: 'password' | 'oauth2';
  oauth_provider: 'google' | 'microsoft' | 'generic' | null;
  /** What failed, for connectionError / sendingError / reconnectRequired. */
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
  /** Its own bounce protection (null: the workspace's). */
  bounce_rate_percent: number | null;
  bounce_window: number | null;
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

export type RetryProtocol = 'smtp' | 'imap';

/** A server of the account that could not be reached, and when it is tried again (mail_connection_retries). */
export interface ConnectionRetryRow {
  account_id: string;
  protocol: RetryProtocol;
  failures: number;
  reason: string;
  since: Date;
  next_try_at: Date;
}

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

  /** Every account of the workspace (what usage reads of it), oldest first. */
  all(db: Executor, workspaceId: string): Promise<Pick<AccountRow, 'id' | 'email' | 'daily_limit'>[]> {
    return db<AccountRow>('email_accounts')
      .where('workspace_id', workspaceId)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('id', 'email', 'daily_limit');
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
    changes: WarmupColumns &
      Partial<
        Pick<
          AccountRow,
          'tracking_domain_id' | 'bounce_rate_percent' | 'bounce_window' | 'smtp_password_enc' | 'imap_password_enc'
        >
      > & { updated_at: Date },
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

  /**
   * Accounts with an IMAP login (a password or an OAuth grant) that can log in (not connectionError, not
   * reconnectRequired) and whose server is not waiting for its next try (`now`): the mailboxes the reader reads.
   */
  async readableImapAccounts(db: Executor, now: Date): Promise<{ id: string; workspace_id: string }[]> {
    return db('email_accounts as a')
      .whereNotNull('a.imap_host')
      .where((q) => {
        q.whereNotNull('a.imap_password_enc').orWhere('a.auth_type', 'oauth2');
      })
      .whereNotIn('a.status', ['connectionError', 'reconnectRequired'])
      .whereNotExists(
        db('mail_connection_retries as r')
          .whereRaw('r.account_id = a.id')
          .andWhere('r.protocol', 'imap')
          .andWhere('r.next_try_at', '>', now)
          .select(db.raw('1')),
      )
      .select('a.id', 'a.workspace_id');
  }

  /**
   * One more failure in a row to reach the account's server: the next try waits `firstWaitMs` doubled for each
   * failure before, at most `maxWaitMs`. Failures while a wait is running (sends already under way) count as
   * the same try.
   */
  async noteConnectionFailure(
    db: Executor,
    retry: { accountId: string; protocol: RetryProtocol; reason: string; now: Date },
    waits: { firstWaitMs: number; maxWaitMs: number },
  ): Promise<ConnectionRetryRow> {
    const { rows } = await db.raw<{ rows: ConnectionRetryRow[] }>(
      `INSERT INTO mail_connection_retries AS r (account_id, protocol, failures, reason, since, next_try_at)
       VALUES (?, ?, 1, ?, ?::timestamptz, ?::timestamptz + ? * interval '1 millisecond')
       ON CONFLICT (account_id, protocol) DO UPDATE SET
         failures = CASE WHEN r.next_try_at <= EXCLUDED.since THEN r.failures + 1 ELSE r.failures END,
         reason = EXCLUDED.reason,
         next_try_at = CASE WHEN r.next_try_at <= EXCLUDED.since
           THEN EXCLUDED.since + least(?, ? * power(2, r.failures)) * interval '1 millisecond'
           ELSE r.next_try_at END
       RETURNING *`,
      [
        retry.accountId,
        retry.protocol,
        retry.reason,
        retry.now,
        retry.now,
        waits.firstWaitMs,
        waits.maxWaitMs,
        waits.firstWaitMs,
      ],
    );
    return rows[0];
  }

  /** The account's server answered: its retry (if any) is over. */
  async clearConnectionFailure(db: Executor, accountId: string, protocol: RetryProtocol): Promise<void> {
    await db('mail_connection_retries').where({ account_id: accountId, protocol }).delete();
  }

  async connectionRetries(db: Executor, accountId: string): Promise<ConnectionRetryRow[]> {
    return db<ConnectionRetryRow>('mail_connection_retries').where({ account_id: accountId }).orderBy('protocol');
  }

  /** Locks these accounts' rows in id order until the caller's transaction ends (FOR NO KEY UPDATE). */
  async lockRows(db: Executor, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await db('email_accounts').whereIn('id', ids).orderBy('id').forNoKeyUpdate().select('id');
  }

  /** The workspace's account with this address (case-insensitive), locked for the caller's transaction. */
  async findByEmail(db: Executor, workspaceId: string, email: string): Promise<AccountRow | undefined> {
    return db<AccountRow>('email_accounts')
      .where('workspace_id', workspaceId)
      .whereRaw('lower(email) = lower(?)', [email])
      .forUpdate()
      .first();
  }

  /** A reconnect: the account logs in with its new grant and is active again. */
  async reconnect(db: Executor, id: string, provider: AccountRow['oauth_provider'], at: Date): Promise<AccountRow> {
    const [row] = await db('email_accounts')
      .where({ id })
      .update({
        auth_type: 'oauth2',
        oauth_provider: provider,
        status: 'active',
        status_reason: null,
        smtp_password_enc: null,
        imap_password_enc: null,
        updated_at: at,
      })
      .returning<AccountRow[]>('*');
    return row;
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
