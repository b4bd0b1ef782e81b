/**
 * A deterministic synthetic lead database: the same seed gives the same companies and people (ids
 * included). Companies get domains derived from their names and an email pattern their people's
 * work emails follow; people get titles consistent with their seniority and department.
 */
import { Faker, en } from '@faker-js/faker';
import type { Executor } from '../../db';
import { loadRows, withoutIndexes } from './bulk';
import {
  COMPANY_COLUMNS,
  PERSON_COLUMNS,
  companyCopy,
  companyScore,
  personScore,
  type CompanyRow,
  type Department,
  type EmailStatus,
  type PersonRow,
  type Seniority,
} from './model';
import { EMAIL_PATTERNS, INDUSTRIES, LOCATIONS, TECHNOLOGIES, asciiWord, emailLocal, titleFor } from './vocabulary';

export interface GenerateOptions {
  people: number;
  companies: number;
  seed?: number;
  /** Empty the lead database first (reveals and list members of its people go with it). */
  replace?: boolean;
  /** created_at / updated_at of the rows. */
  now?: Date;
}

export interface GenerateProgress {
  phase: 'companies' | 'people' | 'indexes';
  done: number;
  total: number;
}

/** Above this many rows, indexes are dropped during the load and rebuilt after it. */
const REBUILD_INDEXES_FROM = 20000;
const BATCH = 5000;
/** Ids are UUIDv7 laid out from this instant, so the same seed gives the same ids. */
const ID_EPOCH = Date.UTC(2026, 0, 1);

const SENIORITY_WEIGHTS: { value: Seniority; weight: number }[] = [
  { value: 'entry', weight: 30 },
  { value: 'senior', weight: 22 },
  { value: 'manager', weight: 18 },
  { value: 'director', weight: 9 },
  { value: 'head', weight: 4 },
  { value: 'vp', weight: 5 },
  { value: 'cSuite', weight: 3 },
  { value: 'owner', weight: 1.5 },
  { value: 'founder', weight: 2 },
  { value: 'partner', weight: 1.5 },
  { value: 'intern', weight: 4 },
];
const DEPARTMENT_WEIGHTS: { value: Department; weight: number }[] = [
  { value: 'engineering', weight: 22 },
  { value: 'sales', weight: 18 },
  { value: 'marketing', weight: 10 },
  { value: 'operations', weight: 9 },
  { value: 'customerSuccess', weight: 8 },
  { value: 'product', weight: 6 },
  { value: 'finance', weight: 6 },
  { value: 'humanResources', weight: 5 },
  { value: 'informationTechnology', weight: 6 },
  { value: 'design', weight: 4 },
  { value: 'legal', weight: 2 },
  { value: 'executive', weight: 4 },
];
const EMAIL_STATUS_WEIGHTS: { value: EmailStatus; weight: number }[] = [
  { value: 'verified', weight: 55 },
  { value: 'likely', weight: 25 },
  { value: 'unverified', weight: 20 },
];
const REVENUE = [
  [10, '$0-$1M'],
  [50, '$1M-$10M'],
  [200, '$10M-$50M'],
  [500, '$50M-$100M'],
  [2000, '$100M-$500M'],
  [5000, '$500M-$1B'],
  [Infinity, '$1B+'],
] as const;
const TLDS = ['.com', '.io', '.co', '.net', '.ai'];
const US_SHARE = 0.55;

export async function generateLeads(
  db: Executor,
  options: GenerateOptions,
  onProgress: (p: GenerateProgress) => void = () => {},
): Promise<{ people: number; companies: number }> {
  const { people, companies, seed = 1, replace = false, now = new Date() } = options;
  const existing = await db('people').count<{ count: string }[]>({ count: '*' }).first();
  const existingCompanies = await db('companies').count<{ count: string }[]>({ count: '*' }).first();
  if (Number(existing?.count) + Number(existingCompanies?.count) > 0) {
    if (!replace)
      throw new Error(
        `The lead database already holds ${existing?.count} people and ${existingCompanies?.count} companies; add --replace to empty it first.`,
      );
    await db.raw('TRUNCATE people, companies CASCADE');
  }

  const f = new Faker({ locale: [en] });
  f.seed(seed);
  const pick = <T>(xs: readonly T[]): T => xs[f.number.int(xs.length - 1)];
  const chance = (p: number) => f.number.float() < p;
  const digits = (n: number) => f.string.numeric({ length: n, allowLeadingZeros: false });
  const uuid = (kind: number, i: number) => {
    const time = (ID_EPOCH + kind * 1e9 + i).toString(16).padStart(12, '0');
    const rand = f.string.hexadecimal({ length: 15, casing: 'lower', prefix: '' });
    return `${time.slice(0, 8)}-${time.slice(8)}-7${rand.slice(0, 3)}-${'89ab'[f.number.int(3)]}${rand.slice(3, 6)}-${rand.slice(6)}${digits(3)}`;
  };
  const location = () => (chance(US_SHARE) ? pick(LOCATIONS.slice(0, 26)) : pick(LOCATIONS.slice(26)));
  const industries = Object.keys(INDUSTRIES);

  // Companies: kept in memory (people pick theirs by size), loaded first.
  const domains = new Set<string>();
  const rows: CompanyRow[] = [];
  for (let i = 0; i < companies; i++) {
    const name = f.company.name();
    const base = asciiWord(name.replace(/\b(and|group|inc|llc|ltd)\b/gi, '')).slice(0, 40);
    let domain = TLDS.map((tld) => base + tld).find((d) => !domains.has(d));
    for (let n = 2; !domain; n++) if (!domains.has(`${base}${n}.com`)) domain = `${base}${n}.com`;
    domains.add(domain);
    const industry = pick(industries);
    const employees = Math.max(1, Math.round(10 ** (f.number.float({ min: 0, max: 1 }) ** 1.6 * 4.6)));
    const [city, state, country, cc] = location();
    const keywords = f.helpers.arrayElements(INDUSTRIES[industry], { min: 2, max: 4 });
    const row: CompanyRow = {
      id: uuid(0, i),
      name,
      domain,
      website_url: `https://${domain}`,
      industry,
      employee_count: employees,
      revenue_range: REVENUE.find(([max]) => employees < max)![1],
      city,
      state,
      country,
      founded_year: 2025 - Math.round(f.number.float({ min: 0, max: 1 }) ** 2 * 75),
      keywords,
      technologies: f.helpers.arrayElements(TECHNOLOGIES, { min: 2, max: 6 }),
      linkedin_url: chance(0.9) ? `https://www.linkedin.com/company/${base}` : null,
      phone: chance(0.7) ? `${cc} ${digits(3)} 555 ${digits(4)}` : null,
      description: chance(0.8)
        ? `${name} provides ${keywords[0]} and ${keywords[1]} for ${pick(['small businesses', 'mid-market companies', 'enterprises', 'consumers', 'public sector organizations'])}.`
        : null,
      email_pattern: pick(EMAIL_PATTERNS),
      score: 0,
      created_at: now,
      updated_at: now,
    };
    row.score = companyScore(row);
    rows.push(row);
  }

  // People are spread over companies by size (sqrt of the headcount), 5% without a company.
  const cumulative: number[] = [];
  let sum = 0;
  for (const c of rows) cumulative.push((sum += Math.sqrt(c.employee_count ?? 1)));
  const pickCompany = (): CompanyRow | null => {
    if (!rows.length || chance(0.05)) return null;
    const x = f.number.float({ min: 0, max: sum });
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return rows[lo];
  };

  const emails = new Set<string>();
  function* peopleBatches(): Generator<PersonRow[]> {
    for (let start = 0; start < people; start += BATCH) {
      const batch: PersonRow[] = [];
      for (let i = start; i < Math.min(people, start + BATCH); i++) {
        const company = pickCompany();
        const firstName = f.person.firstName();
        const lastName = f.person.lastName();
        const seniority = f.helpers.weightedArrayElement(SENIORITY_WEIGHTS);
        const department: Department = ['owner', 'founder'].includes(seniority)
          ? 'executive'
          : f.helpers.weightedArrayElement(DEPARTMENT_WEIGHTS);
        const [city, state, country, cc] =
          company && chance(0.75)
            ? [company.city!, company.state!, company.country!, LOCATIONS.find((l) => l[2] === company.country)![3]]
            : location();
        let workEmail: string | null = null;
        if (company && chance(0.85)) {
          const local = emailLocal(company.email_pattern!, firstName, lastName);
          workEmail = `${local}@${company.domain}`;
          for (let n = 2; emails.has(workEmail); n++) workEmail = `${local}${n}@${company.domain}`;
          emails.add(workEmail);
        }
        const row: PersonRow = {
          id: uuid(1, i),
          first_name: firstName,
          last_name: lastName,
          title: titleFor(seniority, department, pick),
          seniority,
          department,
          city,
          state,
          country,
          linkedin_url: chance(0.8)
            ? `https://www.linkedin.com/in/${asciiWord(firstName)}-${asciiWord(lastName)}-${f.string.alphanumeric({ length: 6, casing: 'lower' })}`
            : null,
          work_email: workEmail,
          email_status: workEmail ? f.helpers.weightedArrayElement(EMAIL_STATUS_WEIGHTS) : 'unavailable',
          mobile_phone: chance(0.35) ? `${cc} ${digits(3)} ${digits(3)} ${digits(4)}` : null,
          ...companyCopy(company),
          score: 0,
          created_at: now,
          updated_at: now,
        };
        row.score = personScore(row);
        batch.push(row);
      }
      yield batch;
    }
  }

  const load = async () => {
    let done = 0;
    onProgress({ phase: 'companies', done: 0, total: companies });
    const companyBatches = Array.from({ length: Math.ceil(rows.length / BATCH) }, (_, b) =>
      rows.slice(b * BATCH, (b + 1) * BATCH),
    );
    await loadRows(db, 'companies', COMPANY_COLUMNS, companyBatches, (n) =>
      onProgress({ phase: 'companies', done: (done += n), total: companies }),
    );
    done = 0;
    onProgress({ phase: 'people', done: 0, total: people });
    await loadRows(db, 'people', PERSON_COLUMNS, peopleBatches(), (n) =>
      onProgress({ phase: 'people', done: (done += n), total: people }),
    );
  };
  if (people + companies >= REBUILD_INDEXES_FROM) {
    let built = 0;
    await withoutIndexes(db, ['people', 'companies'], load, () =>
      onProgress({ phase: 'indexes', done: ++built, total: 0 }),
    );
  } else {
    await load();
  }
  return { people, companies };
}
