/** suppressions: addresses and whole domains a workspace never mails again. */
import { queryAll, type Executor } from '../../db';

export type SuppressionReason = 'unsubscribed' | 'bounced' | 'manual';

export class SuppressionStore {
  async insert(
    db: Executor,
    rows: { workspace_id: string; value: string; reason: SuppressionReason; created_at: Date }[],
  ): Promise<void> {
    if (rows.length) await db('suppressions').insert(rows).onConflict(['workspace_id', 'value']).ignore();
  }

  /** Of `values` (addresses and domains, lower-cased), those on the list. */
  async present(db: Executor, workspaceId: string, values: string[]): Promise<Set<string>> {
    if (values.length === 0) return new Set();
    const rows = await db('suppressions').where({ workspace_id: workspaceId }).whereIn('value', values).select('value');
    return new Set(rows.map((r: { value: string }) => r.value));
  }

  async remove(db: Executor, workspaceId: string, values: string[]): Promise<string[]> {
    const rows = await db('suppressions')
      .where({ workspace_id: workspaceId })
      .whereIn('value', values)
      .delete()
      .returning('value');
    return rows.map((r: { value: string }) => r.value);
  }

  async page(
    db: Executor,
    workspaceId: string,
    page: { limit: number; skip: number; search?: string },
  ): Promise<{ rows: SuppressionRow[]; total: number }> {
    const scoped = () => {
      const q = db('suppressions').where({ workspace_id: workspaceId });
      if (page.search)
        q.andWhere('value', 'like', `%${page.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      return q;
    };
    const [rows, count] = await queryAll(db, [
      () =>
        scoped()
          .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'value' }])
          .limit(page.limit)
          .offset(page.skip)
          .select<SuppressionRow[]>('value', 'reason', 'created_at'),
      () => scoped().count<{ n: string }[]>('* as n'),
    ]);
    return { rows, total: Number(count[0].n) };
  }
}

export interface SuppressionRow {
  value: string;
  reason: SuppressionReason;
  created_at: Date;
}
