/**
 * Credit balances and their ledger. The balance lives on the workspace row and only changes by a
 * single conditional UPDATE, so concurrent charges can never take it below zero; each change writes
 * a ledger row in the same transaction.
 */
import type { Db } from '../../db';
import type { Clock } from '../../clock';
import { newId } from '../../ids';
import { paymentRequired } from '../../http/errors';

export class CreditService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async balance(workspaceId: string, db: Db = this.db): Promise<number> {
    const row = await db('workspaces').where({ id: workspaceId }).first('credit_balance');
    return row ? Number(row.credit_balance) : 0;
  }

  /** Adds credits (plan grant, admin top-up). Returns the new balance. */
  async grant(db: Db, workspaceId: string, amount: number, reason: string, reference: string | null = null): Promise<number> {
    const [row] = await db('workspaces')
      .where({ id: workspaceId })
      .increment('credit_balance', amount)
      .returning('credit_balance');
    if (!row) throw new Error(`workspace ${workspaceId} not found`);
    await this.record(db, workspaceId, amount, row.credit_balance, reason, reference);
    return row.credit_balance;
  }

  /**
   * Takes `amount` credits inside the caller's transaction, or throws 402 and takes nothing.
   * Returns the balance after the charge.
   */
  async charge(trx: Db, workspaceId: string, amount: number, reason: string, reference: string | null = null): Promise<number> {
    if (amount === 0) return this.balance(workspaceId, trx);
    const [row] = await trx('workspaces')
      .where({ id: workspaceId })
      .andWhere('credit_balance', '>=', amount)
      .decrement('credit_balance', amount)
      .returning('credit_balance');
    if (!row) {
      const balance = await this.balance(workspaceId, trx);
      throw paymentRequired(`Insufficient credits: this request needs ${amount} credits and the balance is ${balance}.`);
    }
    await this.record(trx, workspaceId, -amount, row.credit_balance, reason, reference);
    return row.credit_balance;
  }

  private async record(db: Db, workspaceId: string, amount: number, balanceAfter: number, reason: string, reference: string | null) {
    await db('credit_ledger').insert({
      id: newId(),
      workspace_id: workspaceId,
      amount,
      balance_after: balanceAfter,
      reason,
      reference,
      created_at: this.clock.now(),
    });
  }
}
