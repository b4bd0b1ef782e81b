/**
 * People and company search with data options and credits.
 *
 * Charging rule (the same for search, lists and enrichment): a (person, data option) pair is charged
 * once per workspace, the first time it is returned, and only when the person has that data. The
 * reveal rows and the charge are written in one transaction; when the balance cannot cover it the
 * charge throws 402 and the transaction takes the reveal rows back with it.
 */
import type { components } from '../../../generated/api';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock';
import type { Config } from '../../platform/config';
import { queryAll, type Db, type Executor } from '../../db';
import { invalid, detail } from '../../platform/errors';
import type { CreditService } from '../credits';
import {
  employeeRangeOf,
  normalizeDomain,
  type CompanyRow,
  type LeadCompany,
  type LeadPerson,
  type PeopleDataOption,
  type PersonRow,
  type ShownCompanyRow,
  type ShownPersonRow,
} from './model';
import { readShownCompany, readShownPerson, type LeadStore } from './store';
import { defaulted } from '../../platform/paging';

export type PeopleSearchRequest = components['schemas']['PeopleSearchRequest'];
export type CompanySearchRequest = components['schemas']['CompanySearchRequest'];
export type CreditCosts = Config['creditCosts'];

export const DEFAULT_PEOPLE_DATA_OPTIONS: PeopleDataOption[] = ['workEmailReveal'];
/** The deepest page a search serves: at most 500 pages, as the spec's search operations say. */
export const MAX_PAGE = 500;

/** Whether a person has the data an option reveals (no data, no charge). */
export function hasData(person: ShownPersonRow, option: PeopleDataOption): boolean {
  switch (option) {
    case 'workEmailReveal':
      return person.work_email !== null;
    case 'mobilePhoneReveal':
      return person.mobile_phone !== null;
    case 'fullContactAndCompany':
      return person.linkedin_url !== null || person.company_id !== null;
  }
}

/** Whether `full` shows anything beyond the identity fields of a company. */
function hasFullData(c: CompanyRow): boolean {
  return (
    c.employee_count !== null ||
    c.revenue_range !== null ||
    c.founded_year !== null ||
    c.keywords.length > 0 ||
    c.technologies.length > 0 ||
    c.linkedin_url !== null ||
    c.phone !== null ||
    c.description !== null
  );
}

export function toLeadCompany(c: ShownCompanyRow, full: boolean): LeadCompany {
  const identity: LeadCompany = {
    id: c.id,
    name: c.name,
    domain: c.domain,
    websiteUrl: c.website_url,
    industry: c.industry,
    city: c.city,
    state: c.state,
    country: c.country,
  };
  if (!full) return identity;
  return {
    ...identity,
    employeeCount: c.employee_count,
    employeeRange: employeeRangeOf(c.employee_count),
    revenueRange: c.revenue_range,
    foundedYear: c.founded_year,
    keywords: c.keywords,
    technologies: c.technologies,
    linkedinUrl: c.linkedin_url,
    phone: c.phone,
    description: c.description,
  };
}

/** A person as a search shows it: only the requested options' data, and what it cost. */
export function toLeadPerson(
  p: ShownPersonRow,
  company: ShownCompanyRow | undefined,
  options: readonly PeopleDataOption[],
  creditsCharged: number,
): LeadPerson {
  const full = options.includes('fullContactAndCompany');
  const person: LeadPerson = {
    id: p.id,
    firstName: p.first_name,
    lastName: p.last_name,
    name: `${p.first_name} ${p.last_name}`.trim(),
    title: p.title,
    seniority: p.seniority,
    department: p.department,
    city: p.city,
    state: p.state,
    country: p.country,
    emailStatus: p.email_status,
    hasEmail: p.work_email !== null,
    hasMobilePhone: p.mobile_phone !== null,
    company: company ? toLeadCompany(company, full) : null,
    revealed: options.filter((o) => hasData(p, o)),
    creditsCharged,
  };
  if (options.includes('workEmailReveal')) person.email = p.work_email;
  if (options.includes('mobilePhoneReveal')) person.mobilePhone = p.mobile_phone;
  if (full) person.linkedinUrl = p.linkedin_url;
  return person;
}

export interface RevealCharge {
  /** Credits charged per person id (absent = 0). */
  perPerson: Map<string, number>;
  used: number;
  /** The balance after the charge. */
  remaining: number;
}

function pagination(page: number, perPage: number, total: number) {
  return { page, perPage, totalEntries: total, totalPages: Math.min(MAX_PAGE, Math.ceil(total / perPage)) };
}

function domains(values: string[] | undefined, field: string): string[] | undefined {
  if (!values) return undefined;
  const details = [];
  const out: string[] = [];
  for (const [i, v] of values.entries()) {
    const d = normalizeDomain(v);
    if (d) out.push(d);
    else details.push(detail(`${field}.${i}`, 'must be a domain name such as acme.com', 'format'));
  }
  if (details.length) throw invalid(`${field} must hold domain names such as acme.com.`, details);
  return out;
}

/** What LeadService is built from, by name. */
export interface LeadServiceDeps {
  db: Db;
  store: LeadStore;
  clock: Clock;
  credits: CreditService;
  costs: CreditCosts;
}

export class LeadService {
  private readonly db: Db;
  private readonly store: LeadStore;
  private readonly clock: Clock;
  private readonly credits: CreditService;
  private readonly costs: CreditCosts;

  constructor({ db, store, clock, credits, costs }: LeadServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.credits = credits;
    this.costs = costs;
  }

  /** What one revealed item costs on this deployment (a person or company revealed before costs nothing again). */
  get prices(): CreditCosts {
    return { ...this.costs };
  }

  /**
   * Reveals `options` of `people` to the workspace inside the caller's transaction and charges what
   * was not revealed before; throws 402 (and the caller's transaction must roll back) when the
   * balance cannot cover it. Reusable by any module that hands out lead data.
   */
  async revealPeople(
    trx: Executor,
    workspaceId: string,
    people: PersonRow[],
    options: readonly PeopleDataOption[],
  ): Promise<RevealCharge> {
    const pairs = people.flatMap((p) =>
      options.filter((o) => hasData(p, o)).map((option) => ({ personId: p.id, option })),
    );
    const fresh = await this.store.insertPersonReveals(trx, workspaceId, pairs, this.clock.now());
    const perPerson = new Map<string, number>();
    let used = 0;
    for (const r of fresh) {
      const cost = this.costs[r.data_option as PeopleDataOption];
      perPerson.set(r.person_id, (perPerson.get(r.person_id) ?? 0) + cost);
      used += cost;
    }
    const remaining = await this.credits.charge(trx, workspaceId, used, `lead reveal: ${fresh.length} item(s)`);
    return { perPerson, used, remaining };
  }

  /**
   * Work emails of `personIds` for the caller's workspace, charged by the search rules (first
   * reveal of a person with an email costs `creditCosts.workEmailReveal`). Unknown ids are left out
   * of the map; a person without an email maps to null. Throws 402 when the balance cannot cover it.
   */
  async revealWorkEmails(
    trx: Executor,
    workspaceId: string,
    personIds: string[],
  ): Promise<{ emails: Map<string, string | null>; creditsUsed: number; balance: number }> {
    const people = await this.store.peopleByIds(trx, personIds);
    const charge = await this.revealPeople(trx, workspaceId, people, ['workEmailReveal']);
    return {
      emails: new Map(people.map((p) => [p.id, p.work_email])),
      creditsUsed: charge.used,
      balance: charge.remaining,
    };
  }

  /** People as the workspace may see them now (what it has revealed, nothing charged), in the order of `ids`. */
  async showPeople(db: Executor, workspaceId: string, ids: string[]): Promise<Map<string, LeadPerson>> {
    const [people, revealed] = await queryAll(db, [
      () => this.store.shownPeopleByIds(db, ids),
      () => this.store.revealedOptions(db, workspaceId, ids),
    ]);
    const companies = await this.store.companiesByIds(
      db,
      people.flatMap((p) => (p.company_id ? [p.company_id] : [])),
    );
    return new Map(
      people.map((p) => [
        p.id,
        toLeadPerson(p, p.company_id ? companies.get(p.company_id) : undefined, revealed.get(p.id) ?? [], 0),
      ]),
    );
  }

  /**
   * Joins to `q` (another module's query, such as a list's member page) the people its column `personId`
   * names, with what showJoinedPerson needs; an inner join: a row without its person is left out.
   */
  joinShownPeople(q: Knex.QueryBuilder, workspaceId: string, personId: string): Knex.QueryBuilder {
    return this.store.joinShownPeople(this.db, q, workspaceId, personId);
  }

  /** The person of a row of joinShownPeople as the workspace may see it now (what it has revealed, nothing charged). */
  showJoinedPerson(row: Record<string, unknown>): LeadPerson {
    const { person, company, revealed } = readShownPerson(row);
    return toLeadPerson(person, company, revealed, 0);
  }

  /** Joins to `q` the companies its column `companyId` names, as joinShownPeople does people. */
  joinShownCompanies(q: Knex.QueryBuilder, workspaceId: string, companyId: string): Knex.QueryBuilder {
    return this.store.joinShownCompanies(this.db, q, workspaceId, companyId);
  }

  /** The company of a row of joinShownCompanies as the workspace may see it now: in full where it has revealed it. */
  showJoinedCompany(row: Record<string, unknown>): LeadCompany & { revealed: boolean } {
    const { company, revealed } = readShownCompany(row);
    return { ...toLeadCompany(company, revealed), revealed };
  }

  peopleByIds(db: Executor, ids: string[]): Promise<PersonRow[]> {
    return this.store.peopleByIds(db, ids);
  }

  /** The ids of the people whose work email is each of `emails` (lower-cased), for matching an address to people. */
  async peopleIdsByWorkEmail(db: Executor, emails: string[]): Promise<Map<string, string[]>> {
    const byEmail = new Map<string, string[]>();
    for (const p of await this.store.byWorkEmails(db, emails)) {
      const email = p.work_email!.toLowerCase();
      byEmail.set(email, [...(byEmail.get(email) ?? []), p.id]);
    }
    return byEmail;
  }

  /** Which of `ids` are people (or companies) of the lead database. */
  existingIds(db: Executor, kind: 'people' | 'company', ids: string[]): Promise<Set<string>> {
    return this.store.existingIds(db, kind === 'people' ? 'people' : 'companies', ids);
  }

  /**
   * Throws the 402 of a charge, before anything is written, when revealing the work emails of
   * `personIds` (a subquery) would cost more than the balance: a batched caller fails up front with
   * what the whole request needs.
   */
  async requireCreditsForEmails(trx: Executor, workspaceId: string, personIds: Knex.QueryBuilder): Promise<void> {
    const unrevealed = await this.store.countUnrevealedEmails(trx, workspaceId, personIds);
    await this.credits.require(trx, workspaceId, unrevealed * this.costs.workEmailReveal);
  }

  async searchPeople(workspaceId: string, body: PeopleSearchRequest) {
    const options = body.dataOptions ?? DEFAULT_PEOPLE_DATA_OPTIONS;
    const page = defaulted(body.page, 'page');
    const perPage = defaulted(body.perPage, 'perPage');
    const filters = { ...body, companyDomains: domains(body.companyDomains, 'companyDomains') };
    const { rows, total } = await this.store.searchPeople(this.db, workspaceId, filters, {
      offset: (page - 1) * perPage,
      limit: perPage,
    });
    const people = rows.map((r) => r.person);
    // A page whose data the workspace has all paid for (a repeated search) charges nothing: the
    // balance is all it needs, not the reveal-and-charge transaction.
    const unpaid = rows.some((r) => options.some((o) => hasData(r.person, o) && !r.revealed.includes(o)));
    const charge: RevealCharge = unpaid
      ? await this.db.transaction((trx) => this.revealPeople(trx, workspaceId, people, options))
      : { perPerson: new Map(), used: 0, remaining: await this.credits.balance(this.db, workspaceId) };
    return {
      items: rows.map((r) => toLeadPerson(r.person, r.company, options, charge.perPerson.get(r.person.id) ?? 0)),
      pagination: pagination(page, perPage, total),
      dataOptions: [...options],
      credits: { used: charge.used, remaining: charge.remaining },
    };
  }

  async findCompanies(workspaceId: string, body: CompanySearchRequest) {
    const option = body.dataOptions[0];
    const page = defaulted(body.page, 'page');
    const perPage = defaulted(body.perPage, 'perPage');
    const filters = { ...body, domains: domains(body.domains, 'domains') };
    const { rows, total } = await this.store.searchCompanies(this.db, workspaceId, filters, {
      offset: (page - 1) * perPage,
      limit: perPage,
    });
    const full = option === 'full';
    const toReveal = full ? rows.filter(hasFullData) : [];
    const { fresh, remaining } = toReveal.every((c) => c.revealed)
      ? { fresh: new Set<string>(), remaining: await this.credits.balance(this.db, workspaceId) }
      : await this.db.transaction(async (trx) => {
          const newly = await this.store.insertCompanyReveals(
            trx,
            workspaceId,
            toReveal.map((c) => c.id),
            this.clock.now(),
          );
          const balance = await this.credits.charge(
            trx,
            workspaceId,
            newly.length * this.costs.companyFull,
            `company reveal: ${newly.length} item(s)`,
          );
          return { fresh: new Set(newly), remaining: balance };
        });
    return {
      items: rows.map((c) => ({
        ...toLeadCompany(c, full),
        revealed: full,
        creditsCharged: fresh.has(c.id) ? this.costs.companyFull : 0,
      })),
      pagination: pagination(page, perPage, total),
      dataOptions: [option],
      credits: { used: fresh.size * this.costs.companyFull, remaining },
    };
  }
}
