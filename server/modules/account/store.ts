/** Plain rows for email accounts. Every query is scoped by workspace. */
import type { Db, Executor } from '../../db';

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
  created_at: Date;
  updated_at: Date;
}

export type WarmupColumns = Partial<Pick<AccountRow, 'warmup_enabled' | 'warmup_status' | 'warmup_daily_limit' | 'warmup_increase_per_day' | 'warmup_reply_rate_percent'>>;

export interface LinkedCampaign {
  id: string;
  name: string;
  status: string;
}

export class AccountStore {
  async find(db: Db, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<AccountRow | undefined> {
    const query = db('email_accounts').where({ workspace_id: workspaceId, id }).first();
    if (options.forUpdate) query.forUpdate();
    return query;
  }

  async findMany(db: Db, workspaceId: string, ids: string[]): Promise<AccountRow[]> {
    return db('email_accounts').where('workspace_id', workspaceId).whereIn('id', ids);
  }

  async list(db: Db, workspaceId: string, page: { limit: number; skip: number; status?: string; id?: string }): Promise<{ rows: AccountRow[]; total: number }> {
    const filtered = () => {
      const q = db('email_accounts').where('workspace_id', workspaceId);
      if (page.status) q.andWhere('status', page.status);
      if (page.id) q.andWhere('id', page.id);
      return q;
    };
    const rows = await filtered().orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(page.limit).offset(page.skip);
    const [{ count }] = await filtered().count<{ count: string | number }[]>({ count: '*' });
    return { rows, total: Number(count) };
  }

  async emailTaken(db: Db, workspaceId: string, email: string): Promise<boolean> {
    const row = await db('email_accounts').where('workspace_id', workspaceId).whereRaw('lower(email) = lower(?)', [email]).first('id');
    return row !== undefined;
  }

  async count(db: Db, workspaceId: string): Promise<number> {
    const [{ count }] = await db('email_accounts').where('workspace_id', workspaceId).count<{ count: string | number }[]>({ count: '*' });
    return Number(count);
  }

  /** The plan's cap on email accounts, locking the workspace row so concurrent connects count in turn. */
  async lockWorkspaceAccountCap(db: Db, workspaceId: string): Promise<number | null> {
    const row = await db('workspaces as w')
      .join('plans as p', 'p.id', 'w.plan_id')
      .where('w.id', workspaceId)
      .forUpdate('w')
      .first('p.max_email_accounts');
    return row?.max_email_accounts ?? null;
  }

  async insert(db: Db, row: AccountRow): Promise<void> {
    await db('email_accounts').insert(row);
  }

  async update(db: Db, workspaceId: string, id: string, changes: WarmupColumns & { updated_at: Date }): Promise<AccountRow> {
    const [row] = await db('email_accounts').where({ workspace_id: workspaceId, id }).update(changes).returning('*');
    return row;
  }

  /** The campaigns the account is linked to, locked so no launch or link runs while it is removed. */
  async lockLinkedCampaigns(db: Db, workspaceId: string, accountId: string): Promise<LinkedCampaign[]> {
    return db('campaigns as c')
      .join('campaign_accounts as ca', 'ca.campaign_id', 'c.id')
      .where({ 'c.workspace_id': workspaceId, 'ca.account_id': accountId })
      .orderBy('c.id')
      .forUpdate('c')
      .select('c.id', 'c.name', 'c.status');
  }

  /** Deletes the account; its campaign links go with it (ON DELETE CASCADE), its events keep a null account. */
  async delete(db: Db, workspaceId: string, id: string): Promise<void> {
    await db('email_accounts').where({ workspace_id: workspaceId, id }).delete();
  }

  /** Of `campaignIds`, the stored-active ones that have no linked account left. */
  async activeCampaignsWithoutAccounts(db: Db, campaignIds: string[]): Promise<string[]> {
    if (campaignIds.length === 0) return [];
    const rows = await db('campaigns as c')
      .whereIn('c.id', campaignIds)
      .andWhere('c.status', 'active')
      .whereNotExists(db('campaign_accounts as ca').whereRaw('ca.campaign_id = c.id').select(db.raw('1')))
      .select('c.id');
    return rows.map((r: { id: string }) => r.id);
  }

  async pauseCampaigns(db: Db, campaignIds: string[], at: Date): Promise<void> {
    if (campaignIds.length) await db('campaigns').whereIn('id', campaignIds).update({ status: 'paused', updated_at: at });
  }

  // --- mail connections (inbox reader; the sending engine's SMTP side uses the same columns) ---

  /** Accounts with an IMAP login that are not in connectionError: the mailboxes the reader reads. */
  async readableImapAccounts(db: Executor): Promise<{ id: string; workspace_id: string }[]> {
    return db('email_accounts').whereNotNull('imap_host').whereNotNull('imap_password_enc').whereNot('status', 'connectionError').select('id', 'workspace_id');
  }

  async findAny(db: Executor, id: string, options: { forUpdate?: boolean } = {}): Promise<AccountRow | undefined> {
    const query = db('email_accounts').where({ id }).first();
    if (options.forUpdate) query.forUpdate();
    return query;
  }

  async setStatus(db: Executor, id: string, status: AccountRow['status'], reason: string | null, at: Date): Promise<void> {
    await db('email_accounts').where({ id }).update({ status, status_reason: reason, updated_at: at });
  }

  async countActiveLinked(db: Executor, workspaceId: string, campaignId: string): Promise<number> {
    const row = await db('campaign_accounts as ca')
      .join('email_accounts as a', 'a.id', 'ca.account_id')
      .where({ 'ca.campaign_id': campaignId, 'ca.workspace_id': workspaceId, 'a.status': 'active' })
      .first(db.raw('count(*)::int AS n'));
    return row?.n ?? 0;
  }
}
