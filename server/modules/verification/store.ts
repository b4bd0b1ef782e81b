/** The verification cache (email_verifications): plain rows keyed by the lower-cased address. */
import type { Executor } from '../../db';

export interface VerificationRow {
  email: string;
  status: string;
  sub_status: string | null;
  score: number;
  is_role_account: boolean;
  is_free_provider: boolean;
  is_disposable: boolean;
  mx_found: boolean;
  checked_at: Date;
  expires_at: Date;
}

export class VerificationStore {
  /** The rows for these keys that have not expired at `now`. */
  async fresh(db: Executor, keys: string[], now: Date): Promise<VerificationRow[]> {
    if (!keys.length) return [];
    return db('email_verifications').whereIn('email', keys).andWhere('expires_at', '>', now);
  }

  /** Inserts or replaces (a stale row, or a concurrent request's row for the same address). */
  async save(db: Executor, rows: VerificationRow[]): Promise<void> {
    if (!rows.length) return;
    await db('email_verifications').insert(rows).onConflict('email').merge();
  }
}
