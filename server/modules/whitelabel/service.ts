/**
 * Whitelabel administration: a whitelabel workspace registers sub-users (each with its own workspace, on the
 * default plan, and an API key shown once), creates plans and assigns them. A sub-user's quota comes from its
 * workspace's plan, read at authentication, so an assignment takes effect on its next request.
 */
import type { components } from '../../../generated/api';
import { isUniqueViolation, type Db, type Executor } from '../../db';
import type { Clock } from '../../clock';
import type { AuthContext } from '../../http/admission';
import { badRequest, conflict, detail, forbidden, notFound } from '../../http/errors';
import { newId } from '../../ids';
import type { CreditService } from '../credits/service';
import type { PlanRow, SubUserRow, WorkspaceService } from '../workspace/service';
import { hashPassword } from './password';

type Schemas = components['schemas'];
export type SubUser = Schemas['WhitelabelSubUser'];
export type Plan = Schemas['WhitelabelPlan'];

const duplicateEmail = () => conflict('A user with this email already exists.', [detail('email', 'is already registered', 'duplicate')]);

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

export class WhitelabelService {
  constructor(
    private readonly db: Db,
    private readonly workspaces: WorkspaceService,
    private readonly credits: CreditService,
    private readonly clock: Clock,
  ) {}

  async register(auth: AuthContext, input: Schemas['WhitelabelRegisterRequest']): Promise<Schemas['WhitelabelRegistration']> {
    requireWhitelabel(auth);
    // Hashed before the transaction: scrypt is slow on purpose and must not hold the connection.
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    try {
      return await this.db.transaction(async (trx) => {
        // Emails are unique among this workspace's own sub-users only: whether another workspace uses an
        // address is none of the caller's business (the parent's row lock orders concurrent registrations).
        await this.workspaces.lock(trx, auth.workspaceId);
        if (await this.workspaces.subUserByEmail(trx, auth.workspaceId, input.email)) throw duplicateEmail();
        const { workspace, apiKey } = await this.workspaces.createWorkspaceIn(trx, { name: input.name, email: input.email, parentWorkspaceId: auth.workspaceId });
        const userId = newId();
        await this.workspaces.addUser(trx, {
          id: userId,
          workspace_id: workspace.id,
          email: input.email,
          name: input.name,
          password_hash: passwordHash,
          created_at: this.clock.now(),
        });
        const row = await this.workspaces.subUserById(trx, auth.workspaceId, userId);
        return { subUser: toSubUser(row!), apiKey };
      });
    } catch (err) {
      // Two registrations of one email at once: the unique index decides.
      if (isUniqueViolation(err)) throw duplicateEmail();
      throw err;
    }
  }

  async createPlan(auth: AuthContext, input: Schemas['WhitelabelPlanCreateRequest']): Promise<Plan> {
    requireWhitelabel(auth);
    const { perMin, perHour, perDay, perSecond = null } = input.limits;
    const details = [
      ...(perHour < perMin ? [detail('limits.perHour', 'must be at least limits.perMin', 'minimum')] : []),
      ...(perDay < perHour ? [detail('limits.perDay', 'must be at least limits.perHour', 'minimum')] : []),
      ...(perSecond !== null && perSecond > perMin ? [detail('limits.perSecond', 'must be at most limits.perMin', 'maximum')] : []),
    ];
    if (details.length) throw badRequest(`Invalid plan limits: ${details.map((d) => `${d.field.slice(5)} ${d.message}`).join('; ')}.`, details);
    const row: PlanRow = {
      id: newId(),
      owner_workspace_id: auth.workspaceId,
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
    await this.workspaces.createPlan(this.db, row);
    return toPlan(row);
  }

  async getPlan(auth: AuthContext, planId: string): Promise<Plan> {
    requireWhitelabel(auth);
    return toPlan(await this.usablePlan(this.db, auth, planId));
  }

  async assignPlan(auth: AuthContext, subUserId: string, planId: string): Promise<Schemas['WhitelabelPlanAssignment']> {
    requireWhitelabel(auth);
    return this.db.transaction(async (trx) => {
      const subUser = await this.workspaces.subUserById(trx, auth.workspaceId, subUserId);
      if (!subUser) throw notFound('Sub-user not found.');
      const plan = await this.usablePlan(trx, auth, planId);
      const { creditsGranted } = await this.workspaces.assignPlan(trx, subUser.workspace_id, plan);
      // The plan's credits come out of the parent's balance (402, and nothing changes, when it lacks them):
      // assigning plans moves credits through the ledger and never creates them.
      if (creditsGranted > 0) await this.credits.charge(trx, auth.workspaceId, creditsGranted, 'plan_transfer', subUser.workspace_id);
      const updated = await this.workspaces.subUserById(trx, auth.workspaceId, subUserId);
      return { subUser: toSubUser(updated!), plan: toPlan(plan), creditsGranted };
    });
  }

  async findSubUser(auth: AuthContext, email: string): Promise<SubUser> {
    requireWhitelabel(auth);
    const row = await this.workspaces.subUserByEmail(this.db, auth.workspaceId, email);
    if (!row) throw notFound('Sub-user not found.');
    return toSubUser(row);
  }

  private async usablePlan(db: Executor, auth: AuthContext, planId: string): Promise<PlanRow> {
    const plan = await this.workspaces.usablePlan(db, auth.workspaceId, planId);
    if (!plan) throw notFound('Plan not found.');
    return plan;
  }
}

function requireWhitelabel(auth: AuthContext): void {
  if (!auth.whitelabelEnabled) throw forbidden('Whitelabel is not enabled for this workspace.');
}
