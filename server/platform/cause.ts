/**
 * What caused the changes a piece of work makes: a workspace's key (with the request's operation and id), the
 * admin CLI, or the worker. Set once where work enters (the route helper, a CLI command, a worker job's pass)
 * and read where a change is recorded (the credit ledger, the audit log), so the services in between do not
 * hand it along; AsyncLocalStorage carries it through every await of that work.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';

/**
 * `mcp`: a workspace's key, through the MCP server (an agent's tool call); `parent`: a key of the whitelabel
 * workspace above the one changed (`actorFor`).
 */
export type Actor = 'key' | 'mcp' | 'admin' | 'parent' | 'worker';

/** The actors that are a request made with a workspace's key. */
export type KeyActor = 'key' | 'mcp';

export const isKeyActor = (actor: Actor): actor is KeyActor => actor === 'key' || actor === 'mcp';

export interface Cause {
  actor: Exclude<Actor, 'parent'>;
  /** The workspace whose key made the request (key causes). */
  workspaceId: string | null;
  keyId: string | null;
  keyName: string | null;
  /** The operationId, the CLI command (`credits grant`) or the worker job. */
  operation: string;
  requestId: string | null;
  address: string | null;
  /** The ids and field names the request named (server/http/audit.ts); empty outside a request. */
  targetIds: string[];
  fields: string[];
  /** The status the work answers when it succeeds (a request's 200 or 201; 200 outside requests). */
  successStatus: number;
  /**
   * Set when the audit entry of this work was written inside the transaction of a change it made
   * (AuditTrail.recordChange or `writeEntry`), so the route helper does not write a second one after it.
   */
  recorded?: boolean;
  /**
   * The audit entry of a request, written by the database layer inside the first transaction the work commits
   * (server/db), so a change made in a transaction never commits without its entry.
   */
  writeEntry?: (trx: Knex.Transaction) => Promise<void>;
}

const current = new AsyncLocalStorage<Cause>();

export const causing = <T>(cause: Cause, work: () => T): T => current.run(cause, work);

/** A cause outside any request (a CLI command, a worker pass). */
export const causeOutsideRequests = (actor: 'admin' | 'worker', operation: string): Cause => ({
  actor,
  operation,
  workspaceId: null,
  keyId: null,
  keyName: null,
  requestId: null,
  address: null,
  targetIds: [],
  fields: [],
  successStatus: 200,
});

export const currentCause = (): Cause | undefined => current.getStore();

/** Who a change of `workspaceId` was made by: a key of another workspace is its whitelabel parent's. */
export function actorFor(cause: Cause, workspaceId: string): Actor {
  return isKeyActor(cause.actor) && cause.workspaceId !== workspaceId ? 'parent' : cause.actor;
}
