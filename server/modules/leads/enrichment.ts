/**
 * Enrichment (v1 peopleEnrichment, v2 enrich/by-details): match each input to one person by the
 * rules of spec EnrichmentInput.yaml, then reveal and charge the matched people with the lead
 * database's own rule (LeadService.revealPeople), all in one transaction.
 */
import type { components } from '../../../generated/api';
import { queryAll, type Db, type Executor } from '../../db';
import { invalid, detail, type FieldProblem } from '../../platform/errors';
import { normalizeDomain, type PeopleDataOption, type PersonRow } from './model';
import { DEFAULT_PEOPLE_DATA_OPTIONS, toLeadPerson, type LeadService } from './service';
import { linkedinSlug, linkedinUrlForms, normalizeCompanyName, normalizeName } from './match';
import type { LeadStore } from './store';

type EnrichmentInput = components['schemas']['EnrichmentInput'];
type EnrichmentResult = components['schemas']['EnrichmentResult'];
type MatchRule = NonNullable<EnrichmentResult['matchedBy']>;

/** An input's keys in their compared form; a key is absent when the input lacks it. */
interface Keys {
  email?: string;
  linkedin?: string;
  name?: { first: string; last: string };
  domain?: string;
  companyName?: string;
}

type Match = { person: PersonRow; rule: MatchRule } | { person: null; reason: 'noMatch' | 'ambiguousMatch' };

/** Reads the keys of every input, or throws one 400 listing every key that cannot be read. */
function readKeys(inputs: EnrichmentInput[]): Keys[] {
  const details: FieldProblem[] = [];
  const keys = inputs.map((input, i): Keys => {
    const k: Keys = {};
    if (input.email) k.email = input.email.trim().toLowerCase();
    if (input.linkedinUrl) {
      const slug = linkedinSlug(input.linkedinUrl);
      if (slug) k.linkedin = slug;
      else
        details.push(
          detail(
            `people.${i}.linkedinUrl`,
            'must be a LinkedIn profile address such as https://www.linkedin.com/in/jane-doe',
            'format',
          ),
        );
    }
    if (input.firstName && input.lastName)
      k.name = { first: normalizeName(input.firstName), last: normalizeName(input.lastName) };
    if (input.companyDomain) {
      const domain = normalizeDomain(input.companyDomain);
      if (domain) k.domain = domain;
      else details.push(detail(`people.${i}.companyDomain`, 'must be a domain name such as acme.com', 'format'));
    }
    if (input.companyName) k.companyName = normalizeCompanyName(input.companyName);
    return k;
  });
  if (details.length) throw invalid(`${details[0].field} ${details[0].message}.`, details);
  return keys;
}

function groupBy(rows: PersonRow[], key: (row: PersonRow) => string | null): Map<string, PersonRow[]> {
  const groups = new Map<string, PersonRow[]>();
  for (const row of rows) {
    const k = key(row);
    if (k === null) continue;
    groups.set(k, [...(groups.get(k) ?? []), row]);
  }
  return groups;
}

const nameKey = (first: string, last: string) => `${last}\u0000${first}`;

/** What EnrichmentService is built from, by name. */
export interface EnrichmentServiceDeps {
  db: Db;
  store: LeadStore;
  leads: LeadService;
}

export class EnrichmentService {
  private readonly db: Db;
  private readonly store: LeadStore;
  private readonly leads: LeadService;

  constructor({ db, store, leads }: EnrichmentServiceDeps) {
    this.db = db;
    this.store = store;
    this.leads = leads;
  }

  async enrich(
    workspaceId: string,
    inputs: EnrichmentInput[],
    dataOptions: PeopleDataOption[] = DEFAULT_PEOPLE_DATA_OPTIONS,
  ) {
    const keys = readKeys(inputs);
    const matches = await this.match(this.db, keys);

    const matchedPeople = [
      ...new Map(matches.flatMap((m) => (m.person ? [[m.person.id, m.person] as const] : []))).values(),
    ];
    const companies = await this.store.companiesByIds(
      this.db,
      matchedPeople.flatMap((p) => (p.company_id ? [p.company_id] : [])),
    );
    const charge = await this.db.transaction((trx) =>
      this.leads.revealPeople(trx, workspaceId, matchedPeople, dataOptions),
    );

    // A person matched by several inputs shows the charge once, at the first of them.
    const shownCharge = new Set<string>();
    const results = inputs.map((input, i): EnrichmentResult => {
      const m = matches[i];
      if (!m.person) return { input, matched: false, matchedBy: null, reason: m.reason, person: null };
      const first = !shownCharge.has(m.person.id);
      shownCharge.add(m.person.id);
      const company = m.person.company_id ? companies.get(m.person.company_id) : undefined;
      const credits = first ? (charge.perPerson.get(m.person.id) ?? 0) : 0;
      return {
        input,
        matched: true,
        matchedBy: m.rule,
        reason: null,
        person: toLeadPerson(m.person, company, dataOptions, credits),
      };
    });
    const matched = results.filter((r) => r.matched).length;
    return {
      results,
      summary: { total: results.length, matched, unmatched: results.length - matched },
      dataOptions: [...dataOptions],
      credits: { used: charge.used, remaining: charge.remaining },
    };
  }

  /**
   * The bulk job's form (POST /v2/job/enrich), inside the caller's transaction: matches every input,
   * reveals the matched people and charges them once, or throws 400 / 402 having done nothing.
   */
  async matchAndReveal(trx: Executor, workspaceId: string, inputs: EnrichmentInput[], dataOptions: PeopleDataOption[]) {
    const matches = await this.match(trx, readKeys(inputs));
    const matchedPeople = [
      ...new Map(matches.flatMap((m) => (m.person ? [[m.person.id, m.person] as const] : []))).values(),
    ];
    const charge = await this.leads.revealPeople(trx, workspaceId, matchedPeople, dataOptions);
    return {
      matches: matches.map((m) =>
        m.person
          ? { personId: m.person.id, matchedBy: m.rule, reason: null }
          : { personId: null, matchedBy: null, reason: m.reason },
      ),
      charged: charge.used,
    };
  }

  /** Applies the rules in order to every input, with one look-up per rule for the whole request. */
  private async match(db: Executor, keys: Keys[]): Promise<Match[]> {
    const emails = [...new Set(keys.flatMap((k) => (k.email ? [k.email] : [])))];
    const slugs = [...new Set(keys.flatMap((k) => (k.linkedin ? [k.linkedin] : [])))];
    const names = [
      ...new Map(
        keys.flatMap((k) =>
          k.name && (k.domain || k.companyName) ? [[nameKey(k.name.first, k.name.last), k.name] as const] : [],
        ),
      ).values(),
    ];
    const [byEmail, byLinkedin, byName] = await queryAll(db, [
      () =>
        this.store.byWorkEmails(db, emails).then((rows) => groupBy(rows, (r) => r.work_email?.toLowerCase() ?? null)),
      () =>
        this.store
          .byLinkedinUrls(db, slugs.flatMap(linkedinUrlForms))
          .then((rows) => groupBy(rows, (r) => (r.linkedin_url ? linkedinSlug(r.linkedin_url) : null))),
      () =>
        this.store
          .byNames(db, names)
          .then((rows) => groupBy(rows, (r) => nameKey(normalizeName(r.first_name), normalizeName(r.last_name)))),
    ]);

    return keys.map((k): Match => {
      const named = k.name ? (byName.get(nameKey(k.name.first, k.name.last)) ?? []) : [];
      const rules: [MatchRule, PersonRow[] | undefined][] = [
        ['email', k.email ? (byEmail.get(k.email) ?? []) : undefined],
        ['linkedinUrl', k.linkedin ? (byLinkedin.get(k.linkedin) ?? []) : undefined],
        [
          'nameAndCompanyDomain',
          k.name && k.domain
            ? named.filter((p) => p.company_domain && normalizeDomain(p.company_domain) === k.domain)
            : undefined,
        ],
        [
          'nameAndCompanyName',
          k.name && k.companyName
            ? named.filter((p) => p.company_name && normalizeCompanyName(p.company_name) === k.companyName)
            : undefined,
        ],
      ];
      let ambiguous = false;
      for (const [rule, found] of rules) {
        if (found?.length === 1) return { person: found[0], rule };
        if (found && found.length > 1) ambiguous = true;
      }
      return { person: null, reason: ambiguous ? 'ambiguousMatch' : 'noMatch' };
    });
  }
}
