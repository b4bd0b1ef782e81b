/**
 * Credit balances and their ledger: every change of a balance writes a ledger row in the caller's
 * transaction, so the ledger always sums to the balances.
 */
import { queryAll, type Db, type Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { newId } from '../../platform/ids';
import { paymentRequired } from '../../platform/errors';
import { actorFor, currentCause } from '../../platform/cause';
import type { AuditTrail } from '../../platform/audit';
import { decodeCursor, encodeCursor } from '../../platform/cursor';
import type { CreditStore, LedgerRow } from './store';

const insufficient = (needed: number, balance: number) =>
  paymentRequired(`Insufficient credits: this request needs ${needed} credits and the balance is ${balance}.`);

/** What CreditService is built from, by name. */
export interface CreditServiceDeps {
  db: Db;
  store: CreditStore;
  clock: Clock;
  audit: AuditTrail;
}

export class CreditService {
  private readonly db: Db;
  private readonly store: CreditStore;
  private readonly clock: Clock;
  private readonly audit: AuditTrail;

  constructor({ db, store, clock, audit }: CreditServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.audit = audit;
  }

  balance(db: Executor, workspaceId: string): Promise<number> {
    return this.store.balance(db, workspaceId);
  }

  /** Adds credits (plan grant, admin top-up). Returns the new balance. */
  async grant(
    db: Executor,
    workspaceId: string,
    amount: number,
    reason: string,
    reference: string | null = null,
  ): Promise<number> {
    const balance = await this.store.add(db, workspaceId, amount);
    if (balance === undefined) throw new Error(`workspace ${workspaceId} not found`);
    await this.record(db, workspaceId, amount, balance, reason, reference);
    return balance;
  }

  /**
   * Takes `amount` credits inside the caller's transaction, or throws 402 and takes nothing.
   * Returns the balance after the charge.
   */
  async charge(
    trx: Executor,
    workspaceId: string,
    amount: number,
    reason: string,
    reference: string | null = null,
  ): Promise<number> {
    if (amount === 0) return this.balance(trx, workspaceId);
    const balance = await this.store.take(trx, workspaceId, amount);
    if (balance === undefined) throw insufficient(amount, await this.balance(trx, workspaceId));
    await this.record(trx, workspaceId, -amount, balance, reason, reference);
    return balance;
  }

  /** Throws the 402 that `charge` would, without charging: for a caller that checks a whole request up front. */
  async require(db: Executor, workspaceId: string, amount: number): Promise<void> {
    const balance = await this.balance(db, workspaceId);
    if (amount > balance) throw insufficient(amount, balance);
  }

  /** GET /v2/credits/ledger: a page of the workspace's ledger, newest first, and the balance now. */
  async ledger(workspaceId: string, query: { cursor?: string; limit: number }) {
    const before = query.cursor ? decodeCursor(query.cursor) : undefined;
    const [rows, balance] = await queryAll(this.db, [
      () => this.store.page(this.db, workspaceId, before, query.limit + 1),
      () => this.balance(this.db, workspaceId),
    ]);
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    const last = page[page.length - 1];
    return {
      balance,
      items: page.map(ledgerView),
      pagination: {
        limit: query.limit,
        hasMore,
        nextCursor: hasMore ? encodeCursor(last.created_at, last.id) : null,
      },
    };
  }

  /**
   * A ledger row names what caused it (server/platform/cause.ts): the request's operation and id, or the CLI command;
   * the audit entry of the change goes in the same transaction.
   */
  private async record(
    db: Executor,
    workspaceId: string,
    amount: number,
    balanceAfter: number,
    reason: string,
    reference: string | null,
  ) {
    const cause = currentCause();
    await this.audit.recordChange(db, workspaceId, { targetIds: reference ? [reference] : [] });
    await this.store.record(db, {
      id: newId(),
      workspace_id: workspaceId,
      amount,
      balance_after: balanceAfter,
      reason,
      reference,
      created_at: this.clock.now(),
      actor: cause ? actorFor(cause, workspaceId) : null,
      operation: cause?.operation ?? null,
      request_id: cause?.requestId ?? null,
    });
  }
}

function ledgerView(row: LedgerRow) {
  return {
    id: row.id,
    at: row.created_at.toISOString(),
    amount: row.amount,
    balanceAfter: row.balance_after,
    reason: row.reason,
    reference: row.reference,
    actor: row.actor,
    operation: row.operation,
    requestId: row.request_id,
  };
}
