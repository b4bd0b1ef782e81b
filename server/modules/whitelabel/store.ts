/** Whitelabel reads: a parent workspace's sub-users (user + workspace + plan) and the plans it may use. */
import type { Db } from '../../db';
import { DEFAULT_PLAN_ID } from '../../db/migrations/20261123080000_create_platform';
import type { PlanRow } from '../workspace/store';

export interface SubUserRow {
  id: string;
  email: string;
  name: string | null;
  has_password: boolean;
  created_at: Date;
  workspace_id: string;
  credit_balance: number;
  plan_id: string;
  plan_name: string;
  per_second: number | null;
  per_min: number;
  per_hour: number;
  per_day: number;
}

export class WhitelabelStore {
  private subUsers(db: Db, parentWorkspaceId: string) {
    return db('users as u')
      .join('workspaces as w', 'w.id', 'u.workspace_id')
      .join('plans as p', 'p.id', 'w.plan_id')
      .where('w.parent_workspace_id', parentWorkspaceId)
      .select<SubUserRow[]>(
        'u.id',
        'u.email',
        'u.name',
        db.raw('(u.password_hash IS NOT NULL) AS has_password'),
        'u.created_at',
        'w.id as workspace_id',
        'w.credit_balance',
        'p.id as plan_id',
        'p.name as plan_name',
        'p.per_second',
        'p.per_min',
        'p.per_hour',
        'p.per_day',
      );
  }

  async findSubUserById(db: Db, parentWorkspaceId: string, id: string): Promise<SubUserRow | undefined> {
    const [row] = await this.subUsers(db, parentWorkspaceId).andWhere('u.id', id);
    return row;
  }

  async findSubUserByEmail(db: Db, parentWorkspaceId: string, email: string): Promise<SubUserRow | undefined> {
    const [row] = await this.subUsers(db, parentWorkspaceId).andWhereRaw('lower(u.email) = lower(?)', [email]);
    return row;
  }

  /** A plan the workspace may read and assign: its own, or the default plan. */
  findUsablePlan(db: Db, ownerWorkspaceId: string, planId: string): Promise<PlanRow | undefined> {
    return db('plans')
      .where({ id: planId })
      .andWhere((q) => q.where({ owner_workspace_id: ownerWorkspaceId }).orWhere({ id: DEFAULT_PLAN_ID }))
      .first();
  }
}
