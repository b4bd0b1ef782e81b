/**
 * A small hand-made lead database for exact search assertions: three companies, five people.
 * Scores come from the same function as generated and imported data.
 */
import type { Db } from '../../server/db';
import {
  companyCopy,
  companyScore,
  personScore,
  type CompanyRow,
  type PersonRow,
} from '../../server/modules/leads/model';

const at = new Date('2026-01-05T10:00:00Z');

function company(c: Partial<CompanyRow> & Pick<CompanyRow, 'id' | 'name'>): CompanyRow {
  const row: CompanyRow = {
    domain: null,
    website_url: null,
    industry: null,
    employee_count: null,
    revenue_range: null,
    city: null,
    state: null,
    country: null,
    founded_year: null,
    keywords: [],
    technologies: [],
    linkedin_url: null,
    phone: null,
    description: null,
    email_pattern: 'first.last',
    score: 0,
    created_at: at,
    updated_at: at,
    ...c,
  };
  return { ...row, score: companyScore(row) };
}

export const northwind = company({
  id: '0192f0c4-8f1e-7cc3-9d42-5c1b1f7c2a10',
  name: 'Northwind Analytics',
  domain: 'northwindanalytics.com',
  website_url: 'https://northwindanalytics.com',
  industry: 'Computer Software',
  employee_count: 180,
  revenue_range: '$10M-$50M',
  city: 'Austin',
  state: 'Texas',
  country: 'United States',
  founded_year: 2012,
  keywords: ['data analytics', 'business intelligence'],
  technologies: ['salesforce', 'aws'],
  linkedin_url: 'https://www.linkedin.com/company/northwind-analytics',
  phone: '+1 512 555 0148',
  description: 'Dashboards for retail chains.',
});
export const brightpath = company({
  id: '0192f0c4-9a2f-7dd4-8e53-6d2c2f8d3b21',
  name: 'Brightpath Logistics',
  domain: 'brightpathlogistics.com',
  website_url: 'https://brightpathlogistics.com',
  industry: 'Logistics and Supply Chain',
  employee_count: 1200,
  city: 'Houston',
  state: 'Texas',
  country: 'United States',
  keywords: ['freight', 'warehousing'],
  technologies: ['hubspot'],
});
/** A company with identity fields only: `full` shows nothing more, so it costs nothing. */
export const bakery = company({
  id: '0192f0c4-a0b1-7c22-8d33-4e5f60718293',
  name: 'Tiny Bakery',
  domain: 'tinybakery.co',
  industry: 'Food & Beverages',
  city: 'London',
  state: 'England',
  country: 'United Kingdom',
});

function person(
  p: Partial<PersonRow> & Pick<PersonRow, 'id' | 'first_name' | 'last_name'>,
  c: CompanyRow | null,
): PersonRow {
  const row: PersonRow = {
    title: null,
    seniority: null,
    department: null,
    city: null,
    state: null,
    country: null,
    linkedin_url: null,
    work_email: null,
    email_status: 'unavailable',
    mobile_phone: null,
    ...companyCopy(c),
    score: 0,
    created_at: at,
    updated_at: at,
    ...p,
  };
  return { ...row, score: personScore(row) };
}

export const jane = person(
  {
    id: '0192f0c5-0001-7000-8000-000000000001',
    first_name: 'Jane',
    last_name: 'Doe',
    title: 'Sales Director',
    seniority: 'director',
    department: 'sales',
    city: 'Austin',
    state: 'Texas',
    country: 'United States',
    linkedin_url: 'https://www.linkedin.com/in/jane-doe',
    work_email: 'jane.doe@northwindanalytics.com',
    email_status: 'verified',
    mobile_phone: '+1 512 555 0199',
  },
  northwind,
);
export const luis = person(
  {
    id: '0192f0c5-0002-7000-8000-000000000002',
    first_name: 'Luis',
    last_name: 'Ortega',
    title: 'Regional Sales Director',
    seniority: 'director',
    department: 'sales',
    city: 'Houston',
    state: 'Texas',
    country: 'United States',
    linkedin_url: 'https://www.linkedin.com/in/luis-ortega',
    work_email: 'lortega@brightpathlogistics.com',
    email_status: 'likely',
  },
  brightpath,
);
export const amy = person(
  {
    id: '0192f0c5-0003-7000-8000-000000000003',
    first_name: 'Amy',
    last_name: 'Chen',
    title: 'Senior Software Engineer',
    seniority: 'senior',
    department: 'engineering',
    city: 'London',
    state: 'England',
    country: 'United Kingdom',
    work_email: 'amy.chen@northwindanalytics.com',
    email_status: 'unverified',
    mobile_phone: '+44 20 7946 0123',
  },
  northwind,
);
export const bob = person(
  {
    id: '0192f0c5-0004-7000-8000-000000000004',
    first_name: 'Bob',
    last_name: 'Stone',
    title: 'Head of Sales',
    seniority: 'head',
    department: 'sales',
    city: 'London',
    state: 'England',
    country: 'United Kingdom',
  },
  bakery,
);
export const carla = person(
  {
    id: '0192f0c5-0005-7000-8000-000000000005',
    first_name: 'Carla',
    last_name: 'Ruiz',
    title: 'VP of Marketing',
    seniority: 'vp',
    department: 'marketing',
    city: 'Madrid',
    state: 'Community of Madrid',
    country: 'Spain',
    linkedin_url: 'https://www.linkedin.com/in/carla-ruiz',
  },
  null,
);

export const companies = [northwind, brightpath, bakery];
export const people = [jane, luis, amy, bob, carla];

export async function insertFixtures(db: Db): Promise<void> {
  await db('companies').insert(companies);
  await db('people').insert(people);
}
