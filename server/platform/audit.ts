import type { Executor } from '../db';
import type { KeyActor } from './cause';

/**
 * What the route helper tells the audit log about a state-changing request (server/modules/audit writes it; a platform port, so neither side imports the other):
 * who (the key), what (the operation, the ids it names, the names of the fields it sent, never their
 * values, so no secret or message body), from which address, and the outcome (the answer's status).
 */
export interface AuditRecord {
  workspaceId: string;
  /** The key's own request, or the same through the MCP server. */
  actor: KeyActor;
  keyId: string;
  keyName: string | null;
  operation: string;
  targetIds: string[];
  fields: string[];
  address: string | null;
  status: number;
  requestId: string;
}

export interface Auditor {
  /** Writes the entry in `trx`, the transaction of the request's change, or on its own after the work. */
  record(entry: AuditRecord, trx?: Executor): Promise<void>;
}

/**
 * The entries a key, plan, credit or webhook change writes in its own transaction (server/modules/audit
 * implements it): who from the work's cause (server/platform/cause.ts), in the changed workspace's log. For a request
 * of that workspace's own key, this is the request's entry (the route helper then writes none); a whitelabel
 * parent's change of a sub-user gets an entry in each; the CLI's and the worker's changes have only this one.
 */
export interface AuditTrail {
  recordChange(trx: Executor, workspaceId: string, change: { targetIds: string[]; fields?: string[] }): Promise<void>;
}
