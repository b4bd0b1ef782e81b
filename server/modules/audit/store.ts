/** The audit_entries table (append-only). Every method takes the executor first. */
import type { Executor, RawResult } from '../../db';
import type { Actor } from '../../platform/cause';

export interface AuditRow {
  id: string;
  workspace_id: string;
  at: Date;
  actor: Actor;
  key_id: string | null;
  key_name: string | null;
  operation: string;
  target_ids: string[];
  fields: string[];
  address: string | null;
  status: number;
  request_id: string | null;
}

export interface AuditFilter {
  keyId?: string;
  operation?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
  /** Entries older than this id (the cursor). */
  before?: string;
}

export class AuditStore {
  insert(db: Executor, row: AuditRow): Promise<unknown> {
    return db('audit_entries').insert(row);
  }

  /** Newest first, `limit` of them, within the filter. */
  page(db: Executor, workspaceId: string, filter: AuditFilter, limit: number): Promise<AuditRow[]> {
    const q = db('audit_entries').where({ workspace_id: workspaceId });
    if (filter.keyId) q.andWhere({ key_id: filter.keyId });
    if (filter.operation) q.andWhere({ operation: filter.operation });
    if (filter.targetId) q.andWhereRaw('? = ANY (target_ids)', [filter.targetId]);
    if (filter.from) q.andWhere('at', '>=', filter.from);
    if (filter.to) q.andWhere('at', '<', filter.to);
    if (filter.before) q.andWhere('id', '<', filter.before);
    return q.orderBy('id', 'desc').limit(limit);
  }

  /** Drops every entry of the months before `firstKept` (a month's first instant). */
  async dropBefore(db: Executor, firstKept: Date): Promise<number> {
    const result = await db.raw<RawResult>('DELETE FROM audit_entries WHERE at < ?', [firstKept]);
    return result.rowCount ?? 0;
  }
}
