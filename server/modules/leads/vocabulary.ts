/**
 * Realistic vocabulary for the synthetic lead database: industries with their keywords,
 * technologies, locations, and job titles by department and seniority.
 */
import type { Department, Seniority } from './model';

export const INDUSTRIES: Record<string, string[]> = {
  'Computer Software': ['saas', 'b2b software', 'cloud platform', 'api', 'developer tools', 'enterprise software'],
  'Information Technology and Services': [
    'it consulting',
    'managed services',
    'cloud migration',
    'systems integration',
    'help desk',
  ],
  Internet: ['marketplace', 'e-commerce', 'online platform', 'consumer internet', 'mobile apps'],
  'Computer & Network Security': [
    'cybersecurity',
    'identity management',
    'threat detection',
    'zero trust',
    'compliance',
  ],
  'Financial Services': ['payments', 'fintech', 'wealth management', 'lending', 'risk management'],
  Banking: ['retail banking', 'commercial lending', 'mortgages', 'treasury services'],
  Insurance: ['insurtech', 'property and casualty', 'life insurance', 'claims management'],
  Accounting: ['bookkeeping', 'tax advisory', 'audit', 'payroll services'],
  'Marketing and Advertising': [
    'digital marketing',
    'seo',
    'content marketing',
    'brand strategy',
    'performance marketing',
  ],
  'Management Consulting': [
    'strategy consulting',
    'operations consulting',
    'change management',
    'digital transformation',
  ],
  'Staffing and Recruiting': [
    'talent acquisition',
    'executive search',
    'contract staffing',
    'recruitment process outsourcing',
  ],
  'Hospital & Health Care': ['healthcare services', 'patient care', 'telehealth', 'clinical operations'],
  Biotechnology: ['drug discovery', 'genomics', 'life sciences', 'clinical trials'],
  Pharmaceuticals: ['drug development', 'generics', 'regulatory affairs', 'clinical research'],
  'Medical Devices': ['diagnostics', 'surgical devices', 'medical imaging', 'wearables'],
  Retail: ['omnichannel retail', 'consumer products', 'store operations', 'merchandising'],
  'Consumer Goods': ['cpg', 'direct to consumer', 'brand management', 'personal care'],
  'Food & Beverages': ['food production', 'beverages', 'restaurants', 'food distribution'],
  'Logistics and Supply Chain': [
    'freight',
    'warehousing',
    'last mile delivery',
    'supply chain visibility',
    'fleet management',
  ],
  'Transportation/Trucking/Railroad': ['trucking', 'freight brokerage', 'rail freight', 'fleet operations'],
  Construction: ['general contracting', 'commercial construction', 'civil engineering', 'residential building'],
  'Real Estate': ['property management', 'commercial real estate', 'brokerage', 'proptech'],
  'Education Management': ['higher education', 'k-12', 'student services', 'academic administration'],
  'E-Learning': ['online courses', 'edtech', 'corporate training', 'learning management system'],
  Telecommunications: ['wireless', 'broadband', 'voip', 'network infrastructure'],
  Automotive: ['electric vehicles', 'auto parts', 'dealerships', 'mobility'],
  'Renewables & Environment': ['solar energy', 'wind energy', 'energy storage', 'sustainability'],
  'Mechanical or Industrial Engineering': ['manufacturing', 'industrial automation', 'machinery', 'robotics'],
  'Media Production': ['video production', 'streaming', 'post-production', 'content studio'],
  Hospitality: ['hotels', 'travel', 'event management', 'guest experience'],
  'Legal Services': ['corporate law', 'litigation', 'intellectual property', 'legal tech'],
  'Nonprofit Organization Management': ['fundraising', 'community programs', 'grant management', 'advocacy'],
};

export const TECHNOLOGIES = [
  'salesforce',
  'hubspot',
  'aws',
  'google cloud',
  'microsoft azure',
  'slack',
  'zoom',
  'shopify',
  'wordpress',
  'stripe',
  'zendesk',
  'intercom',
  'marketo',
  'segment',
  'snowflake',
  'datadog',
  'github',
  'jira',
  'confluence',
  'google analytics',
  'mailchimp',
  'okta',
  'workday',
  'netsuite',
  'tableau',
  'gong',
  'outreach',
  'pipedrive',
  'kubernetes',
  'react',
];

/** [city, state or region, country, phone country code] */
export const LOCATIONS: [string, string, string, string][] = [
  ['New York', 'New York', 'United States', '+1'],
  ['San Francisco', 'California', 'United States', '+1'],
  ['Los Angeles', 'California', 'United States', '+1'],
  ['San Diego', 'California', 'United States', '+1'],
  ['San Jose', 'California', 'United States', '+1'],
  ['Seattle', 'Washington', 'United States', '+1'],
  ['Austin', 'Texas', 'United States', '+1'],
  ['Dallas', 'Texas', 'United States', '+1'],
  ['Houston', 'Texas', 'United States', '+1'],
  ['Chicago', 'Illinois', 'United States', '+1'],
  ['Boston', 'Massachusetts', 'United States', '+1'],
  ['Denver', 'Colorado', 'United States', '+1'],
  ['Atlanta', 'Georgia', 'United States', '+1'],
  ['Miami', 'Florida', 'United States', '+1'],
  ['Tampa', 'Florida', 'United States', '+1'],
  ['Phoenix', 'Arizona', 'United States', '+1'],
  ['Portland', 'Oregon', 'United States', '+1'],
  ['Minneapolis', 'Minnesota', 'United States', '+1'],
  ['Philadelphia', 'Pennsylvania', 'United States', '+1'],
  ['Pittsburgh', 'Pennsylvania', 'United States', '+1'],
  ['Nashville', 'Tennessee', 'United States', '+1'],
  ['Raleigh', 'North Carolina', 'United States', '+1'],
  ['Charlotte', 'North Carolina', 'United States', '+1'],
  ['Salt Lake City', 'Utah', 'United States', '+1'],
  ['Columbus', 'Ohio', 'United States', '+1'],
  ['Detroit', 'Michigan', 'United States', '+1'],
  ['Toronto', 'Ontario', 'Canada', '+1'],
  ['Vancouver', 'British Columbia', 'Canada', '+1'],
  ['Montreal', 'Quebec', 'Canada', '+1'],
  ['London', 'England', 'United Kingdom', '+44'],
  ['Manchester', 'England', 'United Kingdom', '+44'],
  ['Edinburgh', 'Scotland', 'United Kingdom', '+44'],
  ['Dublin', 'Leinster', 'Ireland', '+353'],
  ['Berlin', 'Berlin', 'Germany', '+49'],
  ['Munich', 'Bavaria', 'Germany', '+49'],
  ['Hamburg', 'Hamburg', 'Germany', '+49'],
  ['Paris', 'Ile-de-France', 'France', '+33'],
  ['Lyon', 'Auvergne-Rhone-Alpes', 'France', '+33'],
  ['Amsterdam', 'North Holland', 'Netherlands', '+31'],
  ['Madrid', 'Community of Madrid', 'Spain', '+34'],
  ['Barcelona', 'Catalonia', 'Spain', '+34'],
  ['Stockholm', 'Stockholm County', 'Sweden', '+46'],
  ['Zurich', 'Zurich', 'Switzerland', '+41'],
  ['Sydney', 'New South Wales', 'Australia', '+61'],
  ['Melbourne', 'Victoria', 'Australia', '+61'],
  ['Singapore', 'Singapore', 'Singapore', '+65'],
  ['Bangalore', 'Karnataka', 'India', '+91'],
  ['Mumbai', 'Maharashtra', 'India', '+91'],
  ['Tel Aviv', 'Tel Aviv District', 'Israel', '+972'],
  ['Sao Paulo', 'Sao Paulo', 'Brazil', '+55'],
];

const DEPARTMENT_LABEL: Record<Department, string> = {
  executive: 'Operations',
  engineering: 'Engineering',
  product: 'Product',
  design: 'Design',
  sales: 'Sales',
  marketing: 'Marketing',
  customerSuccess: 'Customer Success',
  finance: 'Finance',
  humanResources: 'People',
  operations: 'Operations',
  legal: 'Legal',
  informationTechnology: 'IT',
};

const CHIEF: Record<Department, string[]> = {
  executive: ['Chief Executive Officer', 'CEO', 'Chief Operating Officer'],
  engineering: ['Chief Technology Officer', 'CTO'],
  product: ['Chief Product Officer'],
  design: ['Chief Design Officer'],
  sales: ['Chief Revenue Officer', 'Chief Sales Officer'],
  marketing: ['Chief Marketing Officer', 'CMO'],
  customerSuccess: ['Chief Customer Officer'],
  finance: ['Chief Financial Officer', 'CFO'],
  humanResources: ['Chief People Officer', 'Chief Human Resources Officer'],
  operations: ['Chief Operating Officer', 'COO'],
  legal: ['General Counsel', 'Chief Legal Officer'],
  informationTechnology: ['Chief Information Officer', 'Chief Information Security Officer'],
};

/** Individual-contributor roles per department: [entry, senior]. */
const ROLES: Record<Department, [string[], string[]]> = {
  executive: [
    ['Executive Assistant', 'Chief of Staff'],
    ['Senior Executive Assistant', 'Chief of Staff'],
  ],
  engineering: [
    ['Software Engineer', 'Backend Engineer', 'Frontend Engineer', 'Data Engineer', 'QA Engineer'],
    ['Senior Software Engineer', 'Staff Engineer', 'Principal Engineer', 'Senior DevOps Engineer'],
  ],
  product: [
    ['Associate Product Manager', 'Product Analyst'],
    ['Senior Product Manager', 'Principal Product Manager'],
  ],
  design: [
    ['Product Designer', 'UX Designer', 'Graphic Designer'],
    ['Senior Product Designer', 'Lead UX Designer'],
  ],
  sales: [
    ['Sales Development Representative', 'Business Development Representative', 'Account Executive'],
    ['Senior Account Executive', 'Enterprise Account Executive', 'Key Account Manager'],
  ],
  marketing: [
    ['Marketing Coordinator', 'Content Marketing Specialist', 'Growth Marketer'],
    ['Senior Marketing Manager', 'Senior Product Marketing Manager', 'Demand Generation Lead'],
  ],
  customerSuccess: [
    ['Customer Success Associate', 'Support Specialist', 'Onboarding Specialist'],
    ['Senior Customer Success Manager', 'Technical Account Manager'],
  ],
  finance: [
    ['Financial Analyst', 'Accountant', 'Accounts Payable Specialist'],
    ['Senior Financial Analyst', 'Senior Accountant', 'FP&A Lead'],
  ],
  humanResources: [
    ['Recruiter', 'HR Coordinator', 'Talent Acquisition Specialist'],
    ['Senior Recruiter', 'HR Business Partner'],
  ],
  operations: [
    ['Operations Analyst', 'Operations Coordinator'],
    ['Senior Operations Analyst', 'Business Operations Lead'],
  ],
  legal: [
    ['Paralegal', 'Legal Counsel'],
    ['Senior Legal Counsel', 'Senior Corporate Counsel'],
  ],
  informationTechnology: [
    ['IT Support Specialist', 'Systems Administrator', 'Network Engineer'],
    ['Senior Systems Engineer', 'IT Security Engineer'],
  ],
};

/** A plausible title for a seniority and department; `pick` chooses among variants. */
export function titleFor(seniority: Seniority, department: Department, pick: <T>(xs: readonly T[]) => T): string {
  const label = DEPARTMENT_LABEL[department];
  switch (seniority) {
    case 'owner':
      return pick(['Owner', 'Owner & Managing Director', 'Co-Owner']);
    case 'founder':
      return pick(['Founder', 'Co-Founder', 'Founder & CEO', 'Co-Founder & CTO']);
    case 'cSuite':
      return pick(CHIEF[department]);
    case 'partner':
      return pick(['Partner', 'Managing Partner', `${label} Partner`]);
    case 'vp':
      return pick([`VP of ${label}`, `Vice President of ${label}`, `SVP ${label}`]);
    case 'head':
      return pick([`Head of ${label}`, `Global Head of ${label}`]);
    case 'director':
      return pick([
        `Director of ${label}`,
        `${label} Director`,
        `Senior Director of ${label}`,
        `Regional ${label} Director`,
      ]);
    case 'manager':
      return pick([
        `${label} Manager`,
        `Senior ${label} Manager`,
        department === 'engineering' ? 'Engineering Manager' : `${label} Team Lead`,
      ]);
    case 'senior':
      return pick(ROLES[department][1]);
    case 'entry':
      return pick(ROLES[department][0]);
    case 'intern':
      return `${label} Intern`;
  }
}

export const EMAIL_PATTERNS = [
  'first.last',
  'first.last',
  'first.last',
  'flast',
  'flast',
  'first',
  'firstl',
  'first_last',
] as const;

/** A work email local part following the company's pattern. */
export function emailLocal(pattern: string, first: string, last: string): string {
  const f = asciiWord(first);
  const l = asciiWord(last);
  switch (pattern) {
    case 'flast':
      return `${f[0]}${l}`;
    case 'first':
      return f;
    case 'firstl':
      return `${f}${l[0]}`;
    case 'first_last':
      return `${f}_${l}`;
    default:
      return `${f}.${l}`;
  }
}

/** "O'Connor-Ãlvarez" -> "oconnoralvarez" (never empty). */
export function asciiWord(s: string): string {
  const w = s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  return w || 'x';
}
