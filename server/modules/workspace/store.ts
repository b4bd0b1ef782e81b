/** Plain rows for workspaces, their users, API keys and plans. Every method takes the executor first. */
import type { Executor } from '../../db';
import { DEFAULT_PLAN_ID } from './plans';

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
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
  expires_at: Date | null;
  last_used_at: Date | null;
  previous_key_hash: string | null;
  previous_expires_at: Date | null;
}

/** A key as it is shown: never its hashes. */
export type ApiKeyView = Omit<ApiKeyRow, 'key_hash' | 'previous_key_hash'>;

const KEY_VIEW = [
  'id',
  'workspace_id',
  'name',
  'key_prefix',
  'scopes',
  'created_at',
  'revoked_at',
  'expires_at',
  'last_used_at',
  'previous_expires_at',
] as const;

/** A parent workspace's sub-user: the user with its workspace and plan. */
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

export type UserRow = {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  password_hash: string | null;
  created_at: Date;
};

export class WorkspaceStore {
  insertWorkspace(db: Executor, row: WorkspaceRow): Promise<unknown> {
    return db('workspaces').insert(row);
  }

  insertKey(db: Executor, row: ApiKeyRow): Promise<unknown> {
    return db('api_keys').insert(row);
  }

  insertUser(db: Executor, row: UserRow): Promise<unknown> {
    return db('users').insert(row);
  }

  async revokeKey(db: Executor, keyId: string, at: Date): Promise<boolean> {
    const n = await db('api_keys').where({ id: keyId }).whereNull('revoked_at').update({ revoked_at: at });
    return n > 0;
  }

  findKey(db: Executor, keyId: string): Promise<ApiKeyView | undefined> {
    return db('api_keys')
      .where({ id: keyId })
      .first(...KEY_VIEW);
  }

  /** A workspace's keys, newest first, and how many it has. */
  async listKeys(
    db: Executor,
    workspaceId: string | null,
    page: { limit: number; skip: number },
  ): Promise<{ rows: ApiKeyView[]; total: number }> {
    const scoped = () => (workspaceId ? db('api_keys').where({ workspace_id: workspaceId }) : db('api_keys'));
    const [rows, [{ count }]] = await Promise.all([
      scoped()
        .select(...KEY_VIEW)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(page.limit)
        .offset(page.skip) as Promise<ApiKeyView[]>,
      scoped().count<{ count: string }[]>('* as count'),
    ]);
    return { rows, total: Number(count) };
  }

  /** Keys whose id or current prefix is `idOrPrefix` (the admin CLI's look-up). */
  findKeysByIdOrPrefix(db: Executor, idOrPrefix: string): Promise<ApiKeyView[]> {
    const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrPrefix);
    return db('api_keys')
      .where(isId ? { id: idOrPrefix } : { key_prefix: idOrPrefix })
      .select(...KEY_VIEW);
  }

  /** The live keys (not revoked, not expired at `at`) of a workspace that hold one of `scopes`. */
  async countLiveKeysWith(db: Executor, workspaceId: string, scopes: string[], at: Date): Promise<number> {
    const [{ count }] = await db('api_keys')
      .where({ workspace_id: workspaceId })
      .whereNull('revoked_at')
      .andWhere((q) => {
        q.whereNull('expires_at').orWhere('expires_at', '>', at);
      })
      .andWhereRaw('scopes && ?::text[]', [scopes])
      .count<{ count: string }[]>('* as count');
    return Number(count);
  }

  /** Gives a key a new secret; the current one works until `previousExpiresAt`. */
  async rotateKey(
    db: Executor,
    keyId: string,
    secret: { key_hash: string; key_prefix: string },
    previousExpiresAt: Date | null,
  ): Promise<ApiKeyView> {
    const [row] = await db('api_keys')
      .where({ id: keyId })
      .update({
        previous_key_hash: previousExpiresAt ? db.ref('key_hash') : null,
        previous_expires_at: previousExpiresAt,
        ...secret,
      })
      .returning<ApiKeyView[]>([...KEY_VIEW]);
    return row;
  }

  findWorkspace(db: Executor, id: string): Promise<WorkspaceRow | undefined> {
    return db('workspaces').where({ id }).first();
  }

  listWorkspaces(db: Executor): Promise<(WorkspaceRow & { plan_name: string; active_keys: number })[]> {
    return db('workspaces as w')
      .join('plans as p', 'p.id', 'w.plan_id')
      .select('w.*', 'p.name as plan_name')
      .select(
        db.raw(
          '(SELECT count(*)::int FROM api_keys k WHERE k.workspace_id = w.id AND k.revoked_at IS NULL) AS active_keys',
        ),
      )
      .orderBy('w.created_at');
  }

  /** The plan the workspace is on. */
  planOfWorkspace(db: Executor, workspaceId: string): Promise<PlanRow | undefined> {
    return db('plans as p')
      .join('workspaces as w', 'w.plan_id', 'p.id')
      .where('w.id', workspaceId)
      .first<PlanRow | undefined>('p.*');
  }

  findPlan(db: Executor, id: string): Promise<PlanRow | undefined> {
    return db('plans').where({ id }).first();
  }

  /** Moves a workspace to another plan; false when it is already on it (a concurrent switch sees the new plan). */
  async switchPlan(db: Executor, workspaceId: string, planId: string): Promise<boolean> {
    const n = await db('workspaces')
      .where({ id: workspaceId })
      .whereNot({ plan_id: planId })
      .update({ plan_id: planId });
    return n > 0;
  }

  insertPlan(db: Executor, row: PlanRow): Promise<unknown> {
    return db('plans').insert(row);
  }

  /** The caps of the workspace's plan (null: none). */
  async planCaps(
    db: Executor,
    workspaceId: string,
  ): Promise<{ max_contacts: number | null; max_email_accounts: number | null }> {
    const row = await db('workspaces as w')
      .join('plans as p', 'p.id', 'w.plan_id')
      .where('w.id', workspaceId)
      .first<{ max_contacts: number | null; max_email_accounts: number | null } | undefined>(
        'p.max_contacts',
        'p.max_email_accounts',
      );
    return { max_contacts: row?.max_contacts ?? null, max_email_accounts: row?.max_email_accounts ?? null };
  }

  /**
   * Locks the workspace row against other lockers. NO KEY UPDATE, not UPDATE: rows that reference the
   * workspace (quota buckets, contacts) can still be inserted meanwhile, since their foreign-key checks take
   * KEY SHARE, which only FOR UPDATE blocks.
   */
  async timezones(db: Executor, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows: { id: string; timezone: string }[] = await db('workspaces').whereIn('id', ids).select('id', 'timezone');
    return new Map(rows.map((r) => [r.id, r.timezone]));
  }

  async lockWorkspace(db: Executor, workspaceId: string): Promise<void> {
    await db('workspaces').where({ id: workspaceId }).forNoKeyUpdate().first('id');
  }

  private subUsers(db: Executor, parentWorkspaceId: string) {
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

  async findSubUserById(db: Executor, parentWorkspaceId: string, id: string): Promise<SubUserRow | undefined> {
    const [row] = await this.subUsers(db, parentWorkspaceId).andWhere('u.id', id);
    return row;
  }

  async findSubUserByEmail(db: Executor, parentWorkspaceId: string, email: string): Promise<SubUserRow | undefined> {
    const [row] = await this.subUsers(db, parentWorkspaceId).andWhereRaw('lower(u.email) = lower(?)', [email]);
    return row;
  }

  /** A plan the workspace may read and assign: its own, or the default plan. */
  findUsablePlan(db: Executor, ownerWorkspaceId: string, planId: string): Promise<PlanRow | undefined> {
    return db('plans')
      .where({ id: planId })
      .andWhere((q) => {
        q.where({ owner_workspace_id: ownerWorkspaceId }).orWhere({ id: DEFAULT_PLAN_ID });
      })
      .first();
  }

  countWorkspaces(db: Executor): Promise<number> {
    return db('workspaces')
      .count<{ count: string }[]>('* as count')
      .then((r) => Number(r[0].count));
  }
}
