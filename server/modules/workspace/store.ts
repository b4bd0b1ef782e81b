/** Plain rows for workspaces, users, API keys, plans and the credit ledger. */
import type { Db } from '../../db';

export interface WorkspaceRow {
  id: string;
  name: string;
  email: string | null;
  plan_id: string;
  parent_workspace_id: string | null;
  whitelabel_enabled: boolean;
  timezone: string;
  credit_balance: number;
  created_at: Date;
}

export interface PlanRow {
  id: string;
  owner_workspace_id: string | null;
  name: string;
  per_second: number | null;
  per_min: number;
  per_hour: number;
  per_day: number;
  credits: number;
  max_email_accounts: number | null;
  max_contacts: number | null;
  created_at: Date;
}

export interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string | null;
  key_prefix: string;
  key_hash: string;
  created_at: Date;
  revoked_at: Date | null;
}

export class WorkspaceStore {
  constructor(private readonly db: Db) {}

  insertWorkspace(db: Db, row: WorkspaceRow): Promise<unknown> {
    return db('workspaces').insert(row);
  }

  insertKey(db: Db, row: ApiKeyRow): Promise<unknown> {
    return db('api_keys').insert(row);
  }

  insertUser(db: Db, row: { id: string; workspace_id: string; email: string; name: string | null; password_hash: string | null; created_at: Date }): Promise<unknown> {
    return db('users').insert(row);
  }

  async revokeKey(keyId: string, at: Date): Promise<boolean> {
    const n = await this.db('api_keys').where({ id: keyId }).whereNull('revoked_at').update({ revoked_at: at });
    return n > 0;
  }

  findKey(keyId: string): Promise<ApiKeyRow | undefined> {
    return this.db('api_keys').where({ id: keyId }).first();
  }

  findWorkspace(db: Db, id: string): Promise<WorkspaceRow | undefined> {
    return db('workspaces').where({ id }).first();
  }

  listWorkspaces(): Promise<(WorkspaceRow & { plan_name: string; active_keys: number })[]> {
    return this.db('workspaces as w')
      .join('plans as p', 'p.id', 'w.plan_id')
      .select('w.*', 'p.name as plan_name')
      .select(this.db.raw('(SELECT count(*)::int FROM api_keys k WHERE k.workspace_id = w.id AND k.revoked_at IS NULL) AS active_keys'))
      .orderBy('w.created_at');
  }

  findPlan(db: Db, id: string): Promise<PlanRow | undefined> {
    return db('plans').where({ id }).first();
  }

  setPlan(db: Db, workspaceId: string, planId: string): Promise<number> {
    return db('workspaces').where({ id: workspaceId }).update({ plan_id: planId });
  }

  /** Moves a workspace to another plan; false when it is already on it (a concurrent switch sees the new plan). */
  async switchPlan(db: Db, workspaceId: string, planId: string): Promise<boolean> {
    const n = await db('workspaces').where({ id: workspaceId }).whereNot({ plan_id: planId }).update({ plan_id: planId });
    return n > 0;
  }

  insertPlan(db: Db, row: PlanRow): Promise<unknown> {
    return db('plans').insert(row);
  }

  /** Locks the workspace row: orders concurrent changes that must see each other (sub-user registration). */
  async lockWorkspace(db: Db, workspaceId: string): Promise<void> {
    await db('workspaces').where({ id: workspaceId }).forUpdate().first('id');
  }


  countWorkspaces(): Promise<number> {
    return this.db('workspaces').count<{ count: string }[]>('* as count').then((r) => Number(r[0].count));
  }
}
