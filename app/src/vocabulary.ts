/**
 * Words for the API's enumerations, keyed by the generated types: a `Record` over a spec enum must name every
 * value and no other, so `npm run typecheck` fails when the spec adds, removes or renames one.
 */
import type { components } from '../../client';

type Schemas = components['schemas'];

/** Every intent a reply can have. */
export const INTENTS: Record<Schemas['ReplyIntent'], string> = {
  interested: 'Interested',
  meetingRequest: 'Meeting request',
  notInterested: 'Not interested',
  wrongPerson: 'Wrong person',
  unsubscribeRequest: 'Unsubscribe request',
  question: 'Question',
  other: 'Other',
};

export const LEAD_STATUSES: Record<NonNullable<Schemas['ContactLeadStatus']>, string> = {
  interested: 'Interested',
  meetingBooked: 'Meeting booked',
  meetingCompleted: 'Meeting completed',
  closed: 'Closed',
  outOfOffice: 'Out of office',
  notInterested: 'Not interested',
  wrongPerson: 'Wrong person',
  lost: 'Lost',
};

export const SENIORITIES: Record<Schemas['PersonSeniority'], string> = {
  owner: 'Owner',
  founder: 'Founder',
  cSuite: 'C-suite',
  partner: 'Partner',
  vp: 'VP',
  head: 'Head',
  director: 'Director',
  manager: 'Manager',
  senior: 'Senior',
  entry: 'Entry',
  intern: 'Intern',
};

export const DEPARTMENTS: Record<Schemas['PersonDepartment'], string> = {
  executive: 'Executive',
  engineering: 'Engineering',
  product: 'Product',
  design: 'Design',
  sales: 'Sales',
  marketing: 'Marketing',
  customerSuccess: 'Customer success',
  finance: 'Finance',
  humanResources: 'Human resources',
  operations: 'Operations',
  legal: 'Legal',
  informationTechnology: 'Information technology',
};

export const EMPLOYEE_RANGES: Record<Schemas['EmployeeRange'], string> = {
  '1-10': '1-10',
  '11-50': '11-50',
  '51-200': '51-200',
  '201-500': '201-500',
  '501-1000': '501-1,000',
  '1001-5000': '1,001-5,000',
  '5001-10000': '5,001-10,000',
  '10001+': '10,001+',
};

export const EMAIL_STATUSES: Record<Schemas['LeadEmailStatus'], string> = {
  verified: 'Verified',
  likely: 'Likely',
  unverified: 'Unverified',
  unavailable: 'Unavailable',
};

/** Each data option of a people search, and the price it has in `credits.prices` of GET /v2/usage. */
export const PEOPLE_DATA_OPTIONS: Record<Schemas['PeopleDataOption'], string> = {
  workEmailReveal: 'Work email',
  fullContactAndCompany: 'LinkedIn and full company',
  mobilePhoneReveal: 'Mobile phone',
};

export const EVENT_TYPES: Record<Schemas['EventType'], string> = {
  'email.sent': 'A campaign email was sent',
  'email.opened': 'An email was opened',
  'email.clicked': 'A link was clicked',
  'email.replied': 'A contact replied',
  'email.autoReplied': 'An automatic reply came in',
  'email.bounced': 'An email bounced',
  'contact.unsubscribed': 'A contact unsubscribed',
  'contact.leadStatusChanged': "A contact's lead status changed",
  'contact.subsequenceEntered': 'A contact entered a subsequence',
  'campaign.launched': 'A campaign was launched',
  'campaign.paused': 'A campaign was paused',
  'campaign.completed': 'A campaign completed',
  'campaign.deleted': 'A campaign was deleted',
  'campaign.variantWinner': 'An A/Z test picked its winner',
  'account.connected': 'An email account was connected',
  'account.statusChanged': "An email account's status changed",
  'account.warmupEnabled': 'Warm-up was turned on',
  'account.warmupPaused': 'Warm-up was paused',
  'account.warmupBanned': 'Warm-up was stopped by the pool',
  'job.completed': 'A bulk job finished',
  'job.failed': 'A bulk job failed',
  'placement.completed': 'A placement test finished',
  'tracking.domainVerified': 'A tracking domain was verified',
  'tracking.domainFailed': 'A tracking domain failed its check',
};

/** The keys of a vocabulary, typed as the enum they come from. */
export const valuesOf = <K extends string>(words: Record<K, string>): K[] => Object.keys(words) as K[];
