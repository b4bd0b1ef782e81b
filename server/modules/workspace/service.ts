/** Workspaces, their first API key (keys.ts), plans and sub-users. */
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { newId } from '../../platform/ids';
import { notFound } from '../../platform/errors';
import { ALL_SCOPES } from '../../platform/scopes';
import type { IssuedKey, KeyService } from './keys';
import { DEFAULT_PLAN_ID } from './plans';
import type { CreditService } from '../credits';
import type { AuditTrail } from '../../platform/audit';
import type { PlanRow, SubUserRow, UserRow, WorkspaceRow, WorkspaceStore } from './store';

export type { PlanRow, SubUserRow } from './store';

export interface NewWorkspace {
  name: string;
  email?: string | null;
  whitelabel?: boolean;
  planId?: string;
  parentWorkspaceId?: string | null;
  timezone?: string;
}

export type { IssuedKey } from './keys';

/** What WorkspaceService is built from, by name. */
export interface WorkspaceServiceDeps {
  db: Db;
  store: WorkspaceStore;
  credits: CreditService;
  keys: KeyService;
  clock: Clock;
  audit: AuditTrail;
}

export class WorkspaceService {
  private readonly db: Db;
  private readonly store: WorkspaceStore;
  private readonly credits: CreditService;
  private readonly keys: KeyService;
  private readonly clock: Clock;
  private readonly audit: AuditTrail;

  constructor({ db, store, credits, keys, clock, audit }: WorkspaceServiceDeps) {
    this.db = db;
    this.store = store;
    this.credits = credits;
    this.keys = keys;
    this.clock = clock;
    this.audit = audit;
  }

  /** Creates a workspace with its first API key and the plan's credit grant, all or nothing. */
  createWorkspace(input: NewWorkspace): Promise<{ workspace: WorkspaceRow } & IssuedKey> {
    return this.db.transaction((trx) => this.createWorkspaceIn(trx, input));
  }

  /** createWorkspace inside the caller's transaction (a whitelabel registration). */
  async createWorkspaceIn(trx: Executor, input: NewWorkspace): Promise<{ workspace: WorkspaceRow } & IssuedKey> {
    const planId = input.planId ?? DEFAULT_PLAN_ID;
    const plan = await this.store.findPlan(trx, planId);
    if (!plan) throw notFound('Plan not found.');
    const workspace: WorkspaceRow = {
      id: newId(),
      name: input.name,
      email: input.email ?? null,
      plan_id: planId,
      parent_workspace_id: input.parentWorkspaceId ?? null,
      whitelabel_enabled: input.whitelabel ?? false,
      timezone: input.timezone ?? 'UTC',
      credit_balance: 0,
      created_at: this.clock.now(),
    };
    await this.store.insertWorkspace(trx, workspace);
    if (plan.credits > 0) {
      workspace.credit_balance = await this.credits.grant(trx, workspace.id, plan.credits, 'plan_grant', plan.id);
    }
    const { keyId, apiKey } = await this.keys.issue(trx, workspace.id, { name: null, scopes: [ALL_SCOPES] });
    return { workspace, keyId, apiKey };
  }

  /** The operator's key for a workspace (admin CLI): every scope. */
  async createKey(workspaceId: string, name: string | null = null): Promise<IssuedKey> {
    await this.assertExists(workspaceId);
    return this.db.transaction(async (trx) => {
      const { keyId, apiKey } = await this.keys.issue(trx, workspaceId, { name, scopes: [ALL_SCOPES] });
      return { keyId, apiKey };
    });
  }

  /** A 404 for a workspace that is not there (the admin CLI names one by id). */
  async assertExists(workspaceId: string): Promise<void> {
    if (!(await this.store.findWorkspace(this.db, workspaceId))) throw notFound('Workspace not found.');
  }

  /** The operator revokes any key (admin CLI), the workspace's last managing key included. */
  async revokeKey(keyId: string): Promise<void> {
    const key = await this.store.findKey(this.db, keyId);
    if (!key) throw notFound('API key not found.');
    await this.keys.revoke(key.workspace_id, keyId, { fromApi: false });
  }

  /**
   * Puts a workspace on a plan inside the caller's transaction and grants the plan's credits through the
   * ledger. Assigning the plan it is already on grants nothing, so a retried assignment never grants twice.
   */
  async assignPlan(
    db: Executor,
    workspaceId: string,
    plan: Pick<PlanRow, 'id' | 'credits'>,
  ): Promise<{ creditsGranted: number }> {
    const switched = await this.store.switchPlan(db, workspaceId, plan.id);
    if (switched) await this.audit.recordChange(db, workspaceId, { targetIds: [plan.id] });
    if (!switched || plan.credits === 0) return { creditsGranted: 0 };
    await this.credits.grant(db, workspaceId, plan.credits, 'plan_grant', plan.id);
    return { creditsGranted: plan.credits };
  }

  list() {
    return this.store.listWorkspaces(this.db);
  }

  countWorkspaces(): Promise<number> {
    return this.store.countWorkspaces(this.db);
  }

  /** What the workspace's plan caps (null: no cap). */
  async planCaps(
    db: Executor,
    workspaceId: string,
  ): Promise<{ maxContacts: number | null; maxEmailAccounts: number | null }> {
    const caps = await this.store.planCaps(db, workspaceId);
    return { maxContacts: caps.max_contacts, maxEmailAccounts: caps.max_email_accounts };
  }

  /** The plan the workspace is on. */
  async planOf(db: Executor, workspaceId: string): Promise<PlanRow> {
    const plan = await this.store.planOfWorkspace(db, workspaceId);
    if (!plan) throw notFound('Workspace not found.');
    return plan;
  }

  /** Each workspace's IANA time zone (the day its limits count in). */
  timezones(db: Executor, workspaceIds: string[]): Promise<Map<string, string>> {
    return this.store.timezones(db, workspaceIds);
  }

  /** Locks the workspace row: orders concurrent changes that must see each other (sub-user registration, capped additions). */
  lock(trx: Executor, workspaceId: string): Promise<void> {
    return this.store.lockWorkspace(trx, workspaceId);
  }

  addUser(db: Executor, row: UserRow): Promise<unknown> {
    return this.store.insertUser(db, row);
  }

  subUserById(db: Executor, parentWorkspaceId: string, id: string): Promise<SubUserRow | undefined> {
    return this.store.findSubUserById(db, parentWorkspaceId, id);
  }

  subUserByEmail(db: Executor, parentWorkspaceId: string, email: string): Promise<SubUserRow | undefined> {
    return this.store.findSubUserByEmail(db, parentWorkspaceId, email);
  }

  createPlan(db: Executor, row: PlanRow): Promise<unknown> {
    return this.store.insertPlan(db, row);
  }

  /** A plan the workspace may read and assign: its own, or the default plan. */
  usablePlan(db: Executor, ownerWorkspaceId: string, planId: string): Promise<PlanRow | undefined> {
    return this.store.findUsablePlan(db, ownerWorkspaceId, planId);
  }
}
