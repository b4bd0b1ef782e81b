/** Plain rows of `oauth_sessions`: the OAuth connect flows (the account module's own table). */
import type { Executor } from '../../db';
import type { WarmupInput } from './warmup-settings';

export interface OAuthSessionRow {
  id: string;
  workspace_id: string;
  provider: 'google' | 'microsoft' | 'generic';
  /** SHA-256 of the state (the state itself is only in the authorization URL). */
  state_hash: string;
  /** The PKCE verifier, encrypted with SECRET_KEY (context `<session id>:pkce`). */
  code_verifier_enc: string;
  login_hint: string | null;
  reconnect_account_id: string | null;
  return_url: string | null;
  daily_limit: number | null;
  warmup: WarmupInput | null;
  /** `exchanging`: the callback took the state (reads as pending); a state is taken once. */
  status: 'pending' | 'exchanging' | 'connected' | 'failed';
  reason_code: string | null;
  reason_message: string | null;
  account_id: string | null;
  expires_at: Date;
  created_at: Date;
  completed_at: Date | null;
}

export class OAuthSessionStore {
  async insert(db: Executor, row: OAuthSessionRow): Promise<void> {
    await db('oauth_sessions').insert({ ...row, warmup: row.warmup === null ? null : JSON.stringify(row.warmup) });
  }

  async find(db: Executor, workspaceId: string, id: string): Promise<OAuthSessionRow | undefined> {
    return db<OAuthSessionRow>('oauth_sessions').where({ workspace_id: workspaceId, id }).first();
  }

  /** Takes a pending flow by its state's hash, once: the row as it was, or undefined when unknown. */
  async take(db: Executor, stateHash: string): Promise<{ row: OAuthSessionRow; taken: boolean } | undefined> {
    const row = await db<OAuthSessionRow>('oauth_sessions').where({ state_hash: stateHash }).first();
    if (!row) return undefined;
    const taken = await db('oauth_sessions').where({ id: row.id, status: 'pending' }).update({ status: 'exchanging' });
    return { row, taken: taken === 1 };
  }

  async finish(
    db: Executor,
    id: string,
    outcome: Pick<OAuthSessionRow, 'status' | 'reason_code' | 'reason_message' | 'account_id' | 'completed_at'>,
  ): Promise<void> {
    await db('oauth_sessions').where({ id }).update(outcome);
  }
}
