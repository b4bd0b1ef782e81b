/**
 * Whitelabel administration: a whitelabel workspace registers sub-users (each with its own workspace, on the
 * default plan, and an API key shown once), creates plans and assigns them. A sub-user's quota comes from its
 * workspace's plan, read at authentication, so an assignment takes effect on its next request.
 */
import type { components } from '../../../generated/api';
import { isUniqueViolation, type Db, type Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { invalid, conflict, detail, forbidden, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { CreditService } from '../credits';
import type { PlanRow, SubUserRow, Workspace, WorkspaceService } from '../workspace';
import type { AuditTrail } from '../../platform/audit';
import { hashPassword } from './password';

type Schemas = components['schemas'];
export type SubUser = Schemas['WhitelabelSubUser'];
export type Plan = Schemas['WhitelabelPlan'];

/** The whitelabel workspace calling: it owns the sub-users it registers and the plans it creates. */
type Parent = Pick<Workspace, 'id' | 'whitelabelEnabled'>;

const duplicateEmail = () =>
  conflict('A user with this email already exists.', [detail('email', 'is already registered', 'duplicate')]);

function toSubUser(row: SubUserRow): SubUser {
  return {
    id: row.id,
    email: row.email,
    name: row.name ?? '',
    workspaceId: row.workspace_id,
    planId: row.plan_id,
    planName: row.plan_name,
    limits: { perMin: row.per_min, perHour: row.per_hour, perDay: row.per_day, perSecond: row.per_second },
    creditBalance: Number(row.credit_balance),
    hasPassword: row.has_password,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

function toPlan(row: PlanRow): Plan {
  return {
    id: row.id,
    name: row.name,
    limits: { perMin: row.per_min, perHour: row.per_hour, perDay: row.per_day, perSecond: row.per_second },
    credits: row.credits,
    maxEmailAccounts: row.max_email_accounts,
    maxContacts: row.max_contacts,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** What WhitelabelService is built from, by name. */
export interface WhitelabelServiceDeps {
  db: Db;
  workspaces: WorkspaceService;
  credits: CreditService;
  clock: Clock;
  audit: AuditTrail;
}

export class WhitelabelService {
  private readonly db: Db;
  private readonly workspaces: WorkspaceService;
  private readonly credits: CreditService;
  private readonly clock: Clock;
  private readonly audit: AuditTrail;

  constructor({ db, workspaces, credits, clock, audit }: WhitelabelServiceDeps) {
    this.db = db;
    this.workspaces = workspaces;
    this.credits = credits;
    this.clock = clock;
    this.audit = audit;
  }

  async register(
    parent: Parent,
    input: Schemas['WhitelabelRegisterRequest'],
  ): Promise<Schemas['WhitelabelRegistration']> {
    requireWhitelabel(parent);
    // Hashed before the transaction: scrypt is slow on purpose and must not hold the connection.
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    try {
      return await this.db.transaction(async (trx) => {
        // Emails are unique among this workspace's own sub-users only: whether another workspace uses an
        // address is none of the caller's business (the parent's row lock orders concurrent registrations).
        await this.workspaces.lock(trx, parent.id);
        if (await this.workspaces.subUserByEmail(trx, parent.id, input.email)) throw duplicateEmail();
        const { workspace, apiKey } = await this.workspaces.createWorkspaceIn(trx, {
          name: input.name,
          email: input.email,
          parentWorkspaceId: parent.id,
        });
        const userId = newId();
        await this.workspaces.addUser(trx, {
          id: userId,
          workspace_id: workspace.id,
          email: input.email,
          name: input.name,
          password_hash: passwordHash,
          created_at: this.clock.now(),
        });
        await this.audit.recordChange(trx, parent.id, { targetIds: [userId, workspace.id] });
        const row = await this.workspaces.subUserById(trx, parent.id, userId);
        return { subUser: toSubUser(row!), apiKey };
      });
    } catch (err) {
      // Two registrations of one email at once: the unique index decides.
      if (isUniqueViolation(err)) throw duplicateEmail();
      throw err;
    }
  }

  async createPlan(parent: Parent, input: Schemas['WhitelabelPlanCreateRequest']): Promise<Plan> {
    requireWhitelabel(parent);
    const { perMin, perHour, perDay, perSecond = null } = input.limits;
    const details = [
      ...(perHour < perMin ? [detail('limits.perHour', 'must be at least limits.perMin', 'minimum')] : []),
      ...(perDay < perHour ? [detail('limits.perDay', 'must be at least limits.perHour', 'minimum')] : []),
      ...(perSecond !== null && perSecond > perMin
        ? [detail('limits.perSecond', 'must be at most limits.perMin', 'maximum')]
        : []),
    ];
    if (details.length)
      throw invalid(`Invalid plan limits: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}.`, details);
    const row: PlanRow = {
      id: newId(),
      owner_workspace_id: parent.id,
      name: input.name,
      per_second: perSecond,
      per_min: perMin,
      per_hour: perHour,
      per_day: perDay,
      credits: input.credits ?? 0,
      max_email_accounts: input.maxEmailAccounts ?? null,
      max_contacts: input.maxContacts ?? null,
      created_at: this.clock.now(),
    };
    await this.db.transaction(async (trx) => {
      await this.workspaces.createPlan(trx, row);
      await this.audit.recordChange(trx, parent.id, { targetIds: [row.id] });
    });
    return toPlan(row);
  }

  async getPlan(parent: Parent, planId: string): Promise<Plan> {
    requireWhitelabel(parent);
    return toPlan(await this.usablePlan(this.db, parent.id, planId));
  }

  async assignPlan(parent: Parent, subUserId: string, planId: string): Promise<Schemas['WhitelabelPlanAssignment']> {
    requireWhitelabel(parent);
    return this.db.transaction(async (trx) => {
      const subUser = await this.workspaces.subUserById(trx, parent.id, subUserId);
      if (!subUser) throw notFound('Sub-user not found.');
      const plan = await this.usablePlan(trx, parent.id, planId);
      const { creditsGranted } = await this.workspaces.assignPlan(trx, subUser.workspace_id, plan);
      // The plan's credits come out of the parent's balance (402, and nothing changes, when it lacks them):
      // assigning plans moves credits through the ledger and never creates them.
      if (creditsGranted > 0)
        await this.credits.charge(trx, parent.id, creditsGranted, 'plan_transfer', subUser.workspace_id);
      else await this.audit.recordChange(trx, parent.id, { targetIds: [subUserId, planId] });
      const updated = await this.workspaces.subUserById(trx, parent.id, subUserId);
      return { subUser: toSubUser(updated!), plan: toPlan(plan), creditsGranted };
    });
  }

  async findSubUser(parent: Parent, email: string): Promise<SubUser> {
    requireWhitelabel(parent);
    const row = await this.workspaces.subUserByEmail(this.db, parent.id, email);
    if (!row) throw notFound('Sub-user not found.');
    return toSubUser(row);
  }

  private async usablePlan(db: Executor, parentId: string, planId: string): Promise<PlanRow> {
    const plan = await this.workspaces.usablePlan(db, parentId, planId);
    if (!plan) throw notFound('Plan not found.');
    return plan;
  }
}

function requireWhitelabel(parent: Parent): void {
  if (!parent.whitelabelEnabled) throw forbidden('Whitelabel is not enabled for this workspace.');
}
