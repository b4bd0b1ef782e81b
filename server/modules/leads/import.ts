/**
 * CSV import of real companies and people: a header mapping (documented names and aliases,
 * case- and punctuation-insensitive; unknown columns are reported and ignored), per-row errors with
 * line numbers, and one transaction: a fatal error (a missing required column, any invalid row
 * unless skipInvalid) imports nothing.
 *
 * Companies are matched by domain (an existing domain is updated, its people's company copy with
 * it); people by work email (an existing email is updated). A person's company is found by
 * company_domain (else by exact company_name) and created from those columns when unknown.
 */
import { createReadStream, statSync } from 'node:fs';
import { parse } from 'csv-parse';
import type { Executor } from '../../db';
import { newId } from '../../platform/ids';
import { isValidEmail } from '../../platform/email-address';
import {
  DEPARTMENTS,
  EMAIL_STATUSES,
  SENIORITIES,
  companyCopy,
  companyScore,
  normalizeDomain,
  personScore,
  type CompanyRow,
  type Department,
  type EmailStatus,
  type PersonRow,
  type Seniority,
} from './model';

export type ImportKind = 'people' | 'companies';

export interface ImportOptions {
  kind: ImportKind;
  file: string;
  /** Import the valid rows and report the others, instead of importing nothing. */
  skipInvalid?: boolean;
  now?: Date;
}

export interface RowError {
  line: number;
  message: string;
}

export interface ImportReport {
  inserted: number;
  updated: number;
  /** Companies created for people whose company was not in the database. */
  companiesCreated: number;
  errors: RowError[];
  unknownColumns: string[];
}

export class ImportError extends Error {
  constructor(
    message: string,
    readonly report: ImportReport,
  ) {
    super(message);
  }
}

/** Column -> accepted header names (compared lower-case without spaces, dashes, underscores). */
export const COMPANY_HEADERS: Record<string, string[]> = {
  name: ['name', 'companyname', 'company'],
  domain: ['domain', 'companydomain'],
  website_url: ['websiteurl', 'website', 'url'],
  industry: ['industry'],
  employee_count: ['employeecount', 'employees', 'numberofemployees', 'headcount'],
  revenue_range: ['revenuerange', 'revenue', 'annualrevenue'],
  city: ['city'],
  state: ['state', 'region', 'province'],
  country: ['country'],
  founded_year: ['foundedyear', 'founded'],
  keywords: ['keywords', 'tags'],
  technologies: ['technologies', 'techstack', 'tech'],
  linkedin_url: ['linkedinurl', 'linkedin', 'companylinkedinurl'],
  phone: ['phone', 'phonenumber', 'companyphone'],
  description: ['description', 'about'],
  email_pattern: ['emailpattern'],
};
export const PEOPLE_HEADERS: Record<string, string[]> = {
  first_name: ['firstname', 'first', 'givenname'],
  last_name: ['lastname', 'last', 'surname', 'familyname'],
  title: ['title', 'jobtitle', 'position'],
  seniority: ['seniority'],
  department: ['department', 'function'],
  city: ['city'],
  state: ['state', 'region', 'province'],
  country: ['country'],
  linkedin_url: ['linkedinurl', 'linkedin', 'personlinkedinurl'],
  work_email: ['email', 'workemail', 'emailaddress'],
  email_status: ['emailstatus'],
  mobile_phone: ['mobilephone', 'mobile', 'phone', 'cellphone'],
  company_domain: ['companydomain', 'domain', 'website', 'companywebsite'],
  company_name: ['companyname', 'company', 'organization'],
};
const REQUIRED: Record<ImportKind, string[]> = { companies: ['name'], people: ['first_name', 'last_name'] };

const key = (s: string) => s.toLowerCase().replace(/[\s_\-.]/g, '');
const SENIORITY_ALIASES: Record<string, Seniority> = {
  csuite: 'cSuite',
  clevel: 'cSuite',
  executive: 'cSuite',
  vicepresident: 'vp',
  junior: 'entry',
};
const DEPARTMENT_ALIASES: Record<string, Department> = {
  hr: 'humanResources',
  people: 'humanResources',
  it: 'informationTechnology',
  cs: 'customerSuccess',
  support: 'customerSuccess',
};

function enumValue<T extends string>(
  raw: string,
  values: readonly T[],
  aliases: Record<string, T> = {},
): T | undefined {
  const k = key(raw);
  return values.find((v) => v.toLowerCase() === k) ?? aliases[k];
}

const list = (raw: string | undefined) =>
  raw
    ? [
        ...new Set(
          raw
            .split(/[;|]/)
            .map((s) => s.trim().toLowerCase())
            .filter(Boolean),
        ),
      ]
    : [];
const text = (raw: string | undefined, max = 500) => (raw ? raw.slice(0, max) : null);

type Raw = Record<string, string | undefined>;

/** A parsed row, or the reason it is invalid. */
function companyFromCsv(r: Raw, now: Date): CompanyRow | string {
  if (!r.name) return 'name is empty';
  const domain = r.domain || r.website_url ? normalizeDomain(r.domain || r.website_url!) : null;
  if ((r.domain || r.website_url) && !domain) return `"${r.domain || r.website_url}" is not a domain or website`;
  const employees = r.employee_count ? Number(r.employee_count.replace(/[,\s]/g, '')) : null;
  if (employees !== null && (!Number.isInteger(employees) || employees < 0))
    return `employee_count "${r.employee_count}" is not a whole number`;
  const founded = r.founded_year ? Number(r.founded_year) : null;
  if (founded !== null && (!Number.isInteger(founded) || founded < 1600 || founded > 2100))
    return `founded_year "${r.founded_year}" is not a year`;
  const row: CompanyRow = {
    id: newId(),
    name: r.name.slice(0, 300),
    domain,
    website_url: text(r.website_url) ?? (domain ? `https://${domain}` : null),
    industry: text(r.industry, 100),
    employee_count: employees,
    revenue_range: text(r.revenue_range, 50),
    city: text(r.city, 100),
    state: text(r.state, 100),
    country: text(r.country, 100),
    founded_year: founded,
    keywords: list(r.keywords),
    technologies: list(r.technologies),
    linkedin_url: text(r.linkedin_url),
    phone: text(r.phone, 50),
    description: text(r.description, 2000),
    email_pattern: text(r.email_pattern, 20),
    score: 0,
    created_at: now,
    updated_at: now,
  };
  row.score = companyScore(row);
  return row;
}

function personFromCsv(r: Raw, now: Date): (PersonRow & { domain: string | null }) | string {
  if (!r.first_name || !r.last_name) return 'first_name and last_name are required';
  const email = r.work_email?.toLowerCase() ?? null;
  if (email && !isValidEmail(email)) return `"${r.work_email}" is not an email address`;
  const seniority = r.seniority ? enumValue(r.seniority, SENIORITIES, SENIORITY_ALIASES) : null;
  if (seniority === undefined) return `seniority "${r.seniority}" is not one of ${SENIORITIES.join(', ')}`;
  const department = r.department ? enumValue(r.department, DEPARTMENTS, DEPARTMENT_ALIASES) : null;
  if (department === undefined) return `department "${r.department}" is not one of ${DEPARTMENTS.join(', ')}`;
  const status: EmailStatus | undefined = r.email_status
    ? enumValue(r.email_status, EMAIL_STATUSES)
    : email
      ? 'unverified'
      : 'unavailable';
  if (status === undefined) return `email_status "${r.email_status}" is not one of ${EMAIL_STATUSES.join(', ')}`;
  if (!email && status !== 'unavailable') return `email_status "${status}" needs an email`;
  const domain = r.company_domain ? normalizeDomain(r.company_domain) : null;
  if (r.company_domain && !domain) return `company_domain "${r.company_domain}" is not a domain`;
  return {
    id: newId(),
    first_name: r.first_name.slice(0, 100),
    last_name: r.last_name.slice(0, 100),
    title: text(r.title, 200),
    seniority,
    department,
    city: text(r.city, 100),
    state: text(r.state, 100),
    country: text(r.country, 100),
    linkedin_url: text(r.linkedin_url),
    work_email: email,
    email_status: email ? status : 'unavailable',
    mobile_phone: text(r.mobile_phone, 50),
    ...companyCopy(null),
    company_name: text(r.company_name, 300),
    score: 0,
    created_at: now,
    updated_at: now,
    domain,
  };
}

/** Maps a header line to column names; reports unknown and missing columns. */
export function mapHeader(
  kind: ImportKind,
  header: string[],
): { columns: (string | undefined)[]; unknown: string[]; missing: string[] } {
  const table = kind === 'companies' ? COMPANY_HEADERS : PEOPLE_HEADERS;
  const lookup = new Map(Object.entries(table).flatMap(([col, names]) => names.map((n) => [n, col] as const)));
  const columns = header.map((h) => lookup.get(key(h)));
  return {
    columns,
    unknown: header.filter((_, i) => !columns[i]),
    missing: REQUIRED[kind].filter((c) => !columns.includes(c)),
  };
}

export async function importLeadsCsv(
  db: Executor,
  options: ImportOptions,
  onProgress: (bytes: number, total: number) => void = () => {},
): Promise<ImportReport> {
  const { kind, file, skipInvalid = false, now = new Date() } = options;
  const total = statSync(file).size;
  const report: ImportReport = { inserted: 0, updated: 0, companiesCreated: 0, errors: [], unknownColumns: [] };
  let headerProblem: string | undefined;
  const input = createReadStream(file);
  let bytes = 0;
  input.on('data', (chunk) => onProgress((bytes += chunk.length), total));
  const parser = input.pipe(
    parse({
      bom: true,
      trim: true,
      skip_empty_lines: true,
      relax_column_count: true,
      info: true,
      columns: (header: string[]) => {
        const mapped = mapHeader(kind, header);
        report.unknownColumns = mapped.unknown;
        if (mapped.missing.length) headerProblem = `missing required column(s): ${mapped.missing.join(', ')}`;
        return mapped.columns.map((c) => c ?? false);
      },
    }),
  );

  const rows: { line: number; row: Raw }[] = [];
  for await (const { record, info } of parser as AsyncIterable<{ record: Raw; info: { lines: number } }>) {
    if (headerProblem) break;
    rows.push({ line: info.lines, row: record });
  }
  if (headerProblem) throw new ImportError(`Cannot import ${file}: ${headerProblem}.`, report);

  const seen = new Map<string, number>();
  const parsed: { line: number; row: CompanyRow | (PersonRow & { domain: string | null }) }[] = [];
  for (const { line, row } of rows) {
    const result = kind === 'companies' ? companyFromCsv(row, now) : personFromCsv(row, now);
    if (typeof result === 'string') {
      report.errors.push({ line, message: result });
      continue;
    }
    const unique = 'work_email' in result ? result.work_email : result.domain;
    if (unique) {
      const first = seen.get(unique);
      if (first) {
        report.errors.push({ line, message: `${unique} is already on line ${first}` });
        continue;
      }
      seen.set(unique, line);
    }
    parsed.push({ line, row: result });
  }
  if (report.errors.length && !skipInvalid)
    throw new ImportError(`${report.errors.length} invalid row(s); nothing was imported.`, report);

  await db.transaction(async (trx) => {
    if (kind === 'companies')
      await writeCompanies(
        trx,
        parsed.map((p) => p.row as CompanyRow),
        report,
        now,
      );
    else
      await writePeople(
        trx,
        parsed.map((p) => p.row as PersonRow & { domain: string | null }),
        report,
        now,
      );
  });
  return report;
}

const CHUNK = 1000;

async function writeCompanies(trx: Executor, rows: CompanyRow[], report: ImportReport, now: Date) {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const domains = chunk.flatMap((c) => (c.domain ? [c.domain] : []));
    const existing = new Map<string, string>(
      (await trx('companies').whereRaw('lower(domain) = any(?::text[])', [domains]).select('id', 'domain')).map(
        (r: { id: string; domain: string }) => [r.domain.toLowerCase(), r.id],
      ),
    );
    const fresh = chunk.filter((c) => !c.domain || !existing.has(c.domain));
    if (fresh.length) await trx('companies').insert(fresh);
    report.inserted += fresh.length;
    for (const c of chunk.filter((c) => c.domain && existing.has(c.domain))) {
      const id = existing.get(c.domain!)!;
      const { id: _new, created_at: _created, ...fields } = c;
      await trx('companies')
        .where({ id })
        .update({ ...fields, updated_at: now });
      await trx('people')
        .where({ company_id: id })
        .update({ ...companyCopy({ ...c, id }), updated_at: now });
      report.updated += 1;
    }
  }
}

async function writePeople(
  trx: Executor,
  rows: (PersonRow & { domain: string | null })[],
  report: ImportReport,
  now: Date,
) {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const companies = await companiesFor(trx, chunk, report, now);
    const emails = chunk.flatMap((p) => (p.work_email ? [p.work_email] : []));
    const existing = new Map<string, string>(
      (await trx('people').whereRaw('lower(work_email) = any(?::text[])', [emails]).select('id', 'work_email')).map(
        (r: { id: string; work_email: string }) => [r.work_email.toLowerCase(), r.id],
      ),
    );
    const ready = chunk.map(({ domain, company_name, ...p }) => {
      const company = companies.get(domain ?? `name:${company_name?.toLowerCase()}`) ?? null;
      const row = { ...p, ...companyCopy(company) };
      return { ...row, score: personScore(row) };
    });
    const fresh = ready.filter((p) => !p.work_email || !existing.has(p.work_email));
    if (fresh.length) await trx('people').insert(fresh);
    report.inserted += fresh.length;
    for (const p of ready.filter((p) => p.work_email && existing.has(p.work_email))) {
      const { id: _new, created_at: _created, ...fields } = p;
      await trx('people')
        .where({ id: existing.get(p.work_email!)! })
        .update({ ...fields, updated_at: now });
      report.updated += 1;
    }
  }
}

/** The companies of a chunk of people, by domain or `name:<lower name>`, created when unknown. */
async function companiesFor(
  trx: Executor,
  people: (PersonRow & { domain: string | null })[],
  report: ImportReport,
  now: Date,
): Promise<Map<string, CompanyRow>> {
  const out = new Map<string, CompanyRow>();
  const domains = [...new Set(people.flatMap((p) => (p.domain ? [p.domain] : [])))];
  const names = [
    ...new Set(people.flatMap((p) => (!p.domain && p.company_name ? [p.company_name.toLowerCase()] : []))),
  ];
  for (const c of await trx<CompanyRow>('companies').whereRaw('lower(domain) = any(?::text[])', [domains]))
    out.set(c.domain!.toLowerCase(), c);
  for (const c of (await trx('companies')
    .whereRaw('lower(name) = any(?::text[])', [names])
    .orderBy('id')) as CompanyRow[]) {
    if (!out.has(`name:${c.name.toLowerCase()}`)) out.set(`name:${c.name.toLowerCase()}`, c);
  }
  for (const p of people) {
    const k = p.domain ?? (p.company_name ? `name:${p.company_name.toLowerCase()}` : null);
    if (!k || out.has(k)) continue;
    const created = companyFromCsv(
      { name: p.company_name ?? p.domain!, domain: p.domain ?? undefined },
      now,
    ) as CompanyRow;
    await trx('companies').insert(created);
    report.companiesCreated += 1;
    out.set(k, created);
  }
  return out;
}
