/** suppressions: addresses and whole domains a workspace never mails again. */
import type { Executor } from '../../db';

export type SuppressionReason = 'unsubscribed' | 'bounced' | 'manual';

export class SuppressionStore {
  async insert(db: Executor, rows: { workspace_id: string; value: string; reason: SuppressionReason; created_at: Date }[]): Promise<void> {
    if (rows.length) await db('suppressions').insert(rows).onConflict(['workspace_id', 'value']).ignore();
  }

  /** Of `values` (addresses and domains, lower-cased), those on the list. */
  async present(db: Executor, workspaceId: string, values: string[]): Promise<Set<string>> {
    if (values.length === 0) return new Set();
    const rows = await db('suppressions').where({ workspace_id: workspaceId }).whereIn('value', values).select('value');
    return new Set(rows.map((r: { value: string }) => r.value));
  }
}
