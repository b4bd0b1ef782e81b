/**
 * What caused the changes a piece of work makes: a workspace's key (with the request's operation and id), the
 * admin CLI, or the worker. Set once where work enters (the route helper, a CLI command, a worker job's pass)
 * and read where a change is recorded (the credit ledger, the audit log), so the services in between do not
 * hand it along; AsyncLocalStorage carries it through every await of that work.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** `parent`: a key of the whitelabel workspace above the one changed (`actorFor`). */
export type Actor = 'key' | 'admin' | 'parent' | 'worker';

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
}

const current = new AsyncLocalStorage<Cause>();

export const causing = <T>(cause: Cause, work: () => T): T => current.run(cause, work);

export const currentCause = (): Cause | undefined => current.getStore();

/** Who a change of `workspaceId` was made by: a key of another workspace is its whitelabel parent's. */
export function actorFor(cause: Cause, workspaceId: string): Actor {
  return cause.actor === 'key' && cause.workspaceId !== workspaceId ? 'parent' : cause.actor;
}
