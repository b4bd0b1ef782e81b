import type { Db } from '../../server/db';
import { newId } from '../../server/platform/ids';
import { DEFAULT_PLAN_ID } from '../../server/modules/workspace/plans';

/** A workspace row alone (no key, no credits), for a module built on its own with fakes of the rest. */
export async function bareWorkspace(db: Db, at: Date): Promise<string> {
  const id = newId();
  await db('workspaces').insert({
    id,
    name: 'Fakes',
    email: null,
    plan_id: DEFAULT_PLAN_ID,
    parent_workspace_id: null,
    whitelabel_enabled: false,
    timezone: 'UTC',
    credit_balance: 0,
    created_at: at,
  });
  return id;
}
