/** Rows of `tracking_domains`: a workspace's own hosts for the links in its mail. */
import type { Executor } from '../../db';
import type { Page } from '../../platform/paging';

export type TrackingDomainStatus = 'pending' | 'verified' | 'failed';

export interface TrackingDomainRow {
  id: string;
  workspace_id: string;
  domain: string;
  status: TrackingDomainStatus;
  reason: string | null;
  reason_message: string | null;
  cname_found: string | null;
  verified_at: Date | null;
  checked_at: Date | null;
  next_check_at: Date;
  created_at: Date;
  updated_at: Date;
}

export class TrackingDomainStore {
  async insert(db: Executor, row: TrackingDomainRow): Promise<void> {
    await db('tracking_domains').insert(row);
  }

  find(db: Executor, workspaceId: string, id: string, forUpdate = false): Promise<TrackingDomainRow | undefined> {
    const query = db('tracking_domains')
      .where({ workspace_id: workspaceId, id })
      .first<TrackingDomainRow | undefined>();
    return forUpdate ? query.forUpdate() : query;
  }

  findMany(db: Executor, workspaceId: string, ids: string[]): Promise<TrackingDomainRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return db('tracking_domains').where('workspace_id', workspaceId).whereIn('id', ids);
  }

  async lockById(db: Executor, id: string): Promise<TrackingDomainRow | undefined> {
    return db('tracking_domains').where({ id }).forUpdate().first<TrackingDomainRow | undefined>();
  }

  /** The row of `domain` in this workspace, if any. */
  inWorkspace(db: Executor, workspaceId: string, domain: string): Promise<TrackingDomainRow | undefined> {
    return db('tracking_domains').where({ workspace_id: workspaceId, domain }).first<TrackingDomainRow | undefined>();
  }

  /** The workspace where `domain` is verified (at most one: a unique index), if any. */
  verified(db: Executor, domain: string): Promise<TrackingDomainRow | undefined> {
    return db('tracking_domains').where({ domain, status: 'verified' }).first<TrackingDomainRow | undefined>();
  }

  async list(db: Executor, workspaceId: string, page: Page): Promise<{ rows: TrackingDomainRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      db('tracking_domains')
        .where('workspace_id', workspaceId)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(page.limit)
        .offset(page.skip)
        .select<TrackingDomainRow[]>('*'),
      db('tracking_domains').where('workspace_id', workspaceId).count<{ n: string | number }[]>('* as n'),
    ]);
    return { rows, total: Number(count[0].n) };
  }

  async update(db: Executor, id: string, patch: Partial<TrackingDomainRow>): Promise<void> {
    await db('tracking_domains').where({ id }).update(patch);
  }

  async delete(db: Executor, workspaceId: string, id: string): Promise<boolean> {
    return (await db('tracking_domains').where({ workspace_id: workspaceId, id }).delete().returning('id')).length > 0;
  }

  /**
   * Domains due for their scheduled check, each leased until `leaseUntil` (its next check if this worker
   * dies) so that another worker takes others; found by the next_check_at index.
   */
  async claimDue(db: Executor, now: Date, leaseUntil: Date, limit: number): Promise<TrackingDomainRow[]> {
    const due = db('tracking_domains')
      .where('next_check_at', '<=', now)
      .orderBy('next_check_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .select('id');
    return db('tracking_domains')
      .whereIn('id', due)
      .update({ next_check_at: leaseUntil })
      .returning<TrackingDomainRow[]>('*');
  }

  /** Serializes verification of one host name across workspaces (a transaction-scoped advisory lock). */
  async lockName(db: Executor, domain: string): Promise<void> {
    await db.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`tracking_domain:${domain}`]);
  }
}
