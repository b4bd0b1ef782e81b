/**
 * The credit balance (a column of the workspace row, which only this module writes) and the ledger.
 * The balance changes by single conditional UPDATEs, so concurrent charges never take it below zero.
 */
import type { Executor } from '../../db';
import type { Actor } from '../../platform/cause';
import type { Position } from '../../platform/cursor';

export interface LedgerRow {
  id: string;
  workspace_id: string;
  amount: number;
  balance_after: number;
  reason: string;
  reference: string | null;
  created_at: Date;
  actor: Actor | null;
  operation: string | null;
  request_id: string | null;
}

/** `workspaces.credit_balance`, the column this store keeps (an integer). */
type Balance = { credit_balance: number };

export class CreditStore {
  async balance(db: Executor, workspaceId: string): Promise<number> {
    const row = await db('workspaces').where({ id: workspaceId }).first<Balance | undefined>('credit_balance');
    return row ? Number(row.credit_balance) : 0;
  }

  /** Adds `amount`; the new balance, or undefined when the workspace does not exist. */
  async add(db: Executor, workspaceId: string, amount: number): Promise<number | undefined> {
    const [row] = await db('workspaces')
      .where({ id: workspaceId })
      .increment('credit_balance', amount)
      .returning<Balance[]>('credit_balance');
    return row?.credit_balance;
  }

  /** Takes `amount` if the balance covers it; the new balance, or undefined when it does not. */
  async take(db: Executor, workspaceId: string, amount: number): Promise<number | undefined> {
    const [row] = await db('workspaces')
      .where({ id: workspaceId })
      .andWhere('credit_balance', '>=', amount)
      .decrement('credit_balance', amount)
      .returning<Balance[]>('credit_balance');
    return row?.credit_balance;
  }

  async record(db: Executor, row: LedgerRow): Promise<void> {
    await db('credit_ledger').insert(row);
  }

  /** Newest first, `limit` rows older than `before` (the cursor's position). */
  page(db: Executor, workspaceId: string, before: Position | undefined, limit: number): Promise<LedgerRow[]> {
    const q = db<LedgerRow>('credit_ledger').where({ workspace_id: workspaceId });
    if (before) q.andWhereRaw('(created_at, id) < (?, ?)', [before.at, before.id]);
    return q
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit);
  }
}
