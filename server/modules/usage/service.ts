/**
 * A workspace's usage against its plan (GET /v2/usage), read from the modules that own each figure: the
 * credit balance and the lead database's prices, today's sends per account, the contacts and lists held, the
 * plan's caps. The quota windows
 * come with the request (the call that admitted it counted them), so they cost no query here.
 */
import { queryAll, type Db } from '../../db';
import type { Clock } from '../../platform/clock';
import type { components } from '../../../generated/api';
import type { AccountService } from '../account';
import type { ContactService } from '../contact';
import type { CreditService } from '../credits';
import type { LeadService } from '../leads';
import type { ListService } from '../list';
import type { WorkspaceService, ZonedWorkspace } from '../workspace';

type Usage = components['schemas']['Usage'];

/** What UsageService is built from, by name. */
export interface UsageServiceDeps {
  db: Db;
  clock: Clock;
  credits: CreditService;
  leads: LeadService;
  workspaces: WorkspaceService;
  accounts: AccountService;
  contacts: ContactService;
  lists: ListService;
}

export class UsageService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly credits: CreditService;
  private readonly leads: LeadService;
  private readonly workspaces: WorkspaceService;
  private readonly accounts: AccountService;
  private readonly contacts: ContactService;
  private readonly lists: ListService;

  constructor({ db, clock, credits, leads, workspaces, accounts, contacts, lists }: UsageServiceDeps) {
    this.db = db;
    this.clock = clock;
    this.credits = credits;
    this.leads = leads;
    this.workspaces = workspaces;
    this.accounts = accounts;
    this.contacts = contacts;
    this.lists = lists;
  }

  async usage(workspace: ZonedWorkspace, quota: Usage['quota']): Promise<Usage> {
    const at = this.clock.now();
    const [plan, balance, sends, contacts, lists] = await queryAll(this.db, [
      () => this.workspaces.planOf(this.db, workspace.id),
      () => this.credits.balance(this.db, workspace.id),
      () => this.accounts.sendsToday(workspace),
      () => this.contacts.countInWorkspace(this.db, workspace.id),
      () => this.lists.count(this.db, workspace.id),
    ]);
    const sum = (field: 'sent' | 'warmupSent') => sends.accounts.reduce((n, a) => n + a[field], 0);
    return {
      at: at.toISOString(),
      plan: { id: plan.id, name: plan.name },
      credits: { balance, prices: this.leads.prices },
      quota,
      sends: {
        day: sends.day,
        timezone: workspace.timezone,
        sent: sum('sent'),
        warmupSent: sum('warmupSent'),
        accounts: sends.accounts,
      },
      contacts: { used: contacts, limit: plan.max_contacts },
      emailAccounts: { used: sends.accounts.length, limit: plan.max_email_accounts },
      lists: { used: lists, limit: null },
    };
  }
}
