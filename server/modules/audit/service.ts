/**
 * The audit log: who changed what, when, from where, with what outcome. The route helper records every
 * state-changing request through `record` (server/platform/audit.ts says what it holds: the names of the fields
 * sent, never their values). A request's entry is written inside the first transaction its work commits
 * (server/db), so the change and its entry commit together; a request that changes nothing in a transaction
 * (a refusal, a failure, a change of one statement) gets its entry right after the work, in its own statement.
 */
import type { Db } from '../../db';
import type { Clock } from '../../platform/clock';
import { newId } from '../../platform/ids';
import { detail, invalid } from '../../platform/errors';
import type { AuditRecord, Auditor, AuditTrail } from '../../platform/audit';
import { actorFor, currentCause, isKeyActor } from '../../platform/cause';
import type { Executor } from '../../db';
import type { AuditFilter, AuditRow, AuditStore } from './store';

/** What AuditService is built from, by name. */
export interface AuditServiceDeps {
  db: Db;
  store: AuditStore;
  clock: Clock;
  /** Whole months kept besides the current one (AUDIT_RETENTION_MONTHS). */
  retentionMonths: number;
}

export class AuditService implements Auditor, AuditTrail {
  private readonly db: Db;
  private readonly store: AuditStore;
  private readonly clock: Clock;
  private readonly retentionMonths: number;

  constructor({ db, store, clock, retentionMonths }: AuditServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.retentionMonths = retentionMonths;
  }

  record = async (entry: AuditRecord, trx: Executor = this.db): Promise<void> => {
    await this.store.insert(trx, {
      id: newId(),
      workspace_id: entry.workspaceId,
      at: this.clock.now(),
      actor: entry.actor,
      key_id: entry.keyId,
      key_name: entry.keyName,
      operation: entry.operation,
      target_ids: entry.targetIds,
      fields: entry.fields,
      address: entry.address,
      status: entry.status,
      request_id: entry.requestId,
    });
  };

  recordChange = async (
    trx: Executor,
    workspaceId: string,
    change: { targetIds: string[]; fields?: string[] },
  ): Promise<void> => {
    const cause = currentCause();
    // Work with no cause (a test's direct call) has no one to name.
    if (!cause) return;
    const own = isKeyActor(cause.actor) && cause.workspaceId === workspaceId;
    if (own && cause.recorded) return;
    await this.store.insert(trx, {
      id: newId(),
      workspace_id: workspaceId,
      at: this.clock.now(),
      actor: actorFor(cause, workspaceId),
      key_id: cause.keyId,
      key_name: cause.keyName,
      operation: cause.operation,
      target_ids: cause.targetIds.length ? cause.targetIds : change.targetIds,
      fields: cause.fields.length ? cause.fields : (change.fields ?? []),
      address: cause.address,
      // The change commits with its entry: the work it belongs to succeeded.
      status: cause.successStatus,
      request_id: cause.requestId,
    });
    if (own) cause.recorded = true;
  };

  async list(workspaceId: string, filter: Omit<AuditFilter, 'before'> & { cursor?: string }, limit: number) {
    if (filter.from && filter.to && filter.from >= filter.to) {
      throw invalid('from must be before to.', [detail('from', 'must be before to', 'range', 'query')]);
    }
    const before = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const rows = await this.store.page(this.db, workspaceId, { ...filter, before }, limit + 1);
    const items = rows.slice(0, limit).map(entryView);
    const hasMore = rows.length > limit;
    return {
      items,
      pagination: { limit, hasMore, nextCursor: hasMore ? encodeCursor(items[items.length - 1].id) : null },
    };
  }

  /**
   * The worker's job: with a retention, drops the months before it whole (every entry before the first day,
   * UTC, of the oldest month kept).
   */
  readonly retention = {
    runOnce: (): Promise<number> => {
      if (this.retentionMonths === 0) return Promise.resolve(0);
      const now = this.clock.now();
      const firstKept = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - this.retentionMonths, 1));
      return this.store.dropBefore(this.db, firstKept);
    },
  };
}

const encodeCursor = (id: string) => `au1.${id}`;

function decodeCursor(cursor: string): string {
  const id = cursor.startsWith('au1.') ? cursor.slice(4) : '';
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
    throw invalid('cursor was not given by this API.', [
      detail('cursor', 'not a cursor of this API', 'cursor', 'query'),
    ]);
  }
  return id;
}

function entryView(row: AuditRow) {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    keyId: row.key_id,
    keyName: row.key_name,
    operation: row.operation,
    targetIds: row.target_ids,
    fields: row.fields,
    address: row.address,
    outcome: row.status,
    requestId: row.request_id,
  };
}
