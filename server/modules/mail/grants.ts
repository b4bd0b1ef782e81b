/** Plain rows of `mailbox_oauth_grants`: each OAuth account's grant (the mail module's own table). */
import type { Executor } from '../../db';

export interface GrantRow {
  account_id: string;
  provider: string;
  /** Encrypted with SECRET_KEY (context `<account id>:oauth_refresh`). */
  refresh_token_enc: string;
  /** Encrypted with SECRET_KEY (context `<account id>:oauth_access`). */
  access_token_enc: string | null;
  access_expires_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export class GrantStore {
  async find(db: Executor, accountId: string, options: { forUpdate?: boolean } = {}): Promise<GrantRow | undefined> {
    const query = db<GrantRow>('mailbox_oauth_grants').where({ account_id: accountId }).first();
    if (options.forUpdate) query.forUpdate();
    return query;
  }

  /** A new grant, or a reconnect's grant replacing the dead or old one. */
  async put(db: Executor, row: GrantRow): Promise<void> {
    await db('mailbox_oauth_grants')
      .insert(row)
      .onConflict('account_id')
      .merge([
        'provider',
        'refresh_token_enc',
        'access_token_enc',
        'access_expires_at',
        'revoked_at',
        'revoked_reason',
        'updated_at',
      ]);
  }

  async update(
    db: Executor,
    accountId: string,
    columns: Partial<Omit<GrantRow, 'account_id' | 'created_at'>>,
  ): Promise<void> {
    await db('mailbox_oauth_grants').where({ account_id: accountId }).update(columns);
  }
}
