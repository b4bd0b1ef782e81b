/**
 * v1 people_enrichment/peopleEnrichment and v2 enrich/by-details: each match rule and their order,
 * no match and ambiguity, charging by the reveal rules (re-reveal free, search reveals count, a
 * person twice in one request charged once), 402 with nothing charged, validation in v1 and v2.
 */
import { amy, bob, brightpath, carla, insertFixtures, jane, luis, northwind } from './people-search-fixtures';
import { readJson, type ErrorBody, type Success, type V1ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer } from '../helpers/server';

// Two namesakes at Northwind: a name with the company is ambiguous for them.
const johnA = {
  ...amy,
  id: '0192f0c5-0006-7000-8000-000000000006',
  first_name: 'John',
  last_name: 'Smith',
  work_email: 'john.smith@northwindanalytics.com',
  mobile_phone: null,
};
const johnB = {
  ...amy,
  id: '0192f0c5-0007-7000-8000-000000000007',
  first_name: 'John',
  last_name: 'Smith',
  work_email: 'jsmith@northwindanalytics.com',
  mobile_phone: null,
};

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
  await t.db('people').insert([johnA, johnB]);
});
afterAll(() => t.close());

type Body = { people: Record<string, string>[]; dataOptions?: string[] };
const post = (path: string, apiKey: string, body: unknown) =>
  t.fetch(path, {
    method: 'POST',
    apiKey,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
/** v1 and v2 answer the same success body; a test that expects an error reads it as `enrich<ErrorBody>`. */
async function enrich<T = Success<'/v1/people_enrichment/peopleEnrichment', 'post'>>(
  apiKey: string,
  body: Body,
  path = '/v1/people_enrichment/peopleEnrichment',
) {
  const res = await post(path, apiKey, body);
  return { status: res.status, body: await readJson<T>(res) };
}
const reveals = (workspaceId: string) =>
  t
    .db('people_reveals')
    .where({ workspace_id: workspaceId })
    .orderBy(['person_id', 'data_option'])
    .select('person_id', 'data_option');
const balance = async (workspaceId: string) =>
  (await t.db('workspaces').where({ id: workspaceId }).first<{ credit_balance: number }>('credit_balance'))
    .credit_balance;

describe('matching', () => {
  it('returns the person and company found by the work email, with the exact fields', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const { status, body } = await enrich(ws.apiKey, { people: [{ email: 'Jane.Doe@NorthwindAnalytics.com' }] });
    expect(status).toBe(200);
    expect(body).toEqual({
      status: 'success',
      success: true,
      message: '1 of 1 person matched',
      data: {
        results: [
          {
            input: { email: 'Jane.Doe@NorthwindAnalytics.com' },
            matched: true,
            matchedBy: 'email',
            reason: null,
            person: {
              id: jane.id,
              firstName: 'Jane',
              lastName: 'Doe',
              name: 'Jane Doe',
              title: 'Sales Director',
              seniority: 'director',
              department: 'sales',
              city: 'Austin',
              state: 'Texas',
              country: 'United States',
              emailStatus: 'verified',
              hasEmail: true,
              hasMobilePhone: true,
              email: 'jane.doe@northwindanalytics.com',
              company: {
                id: northwind.id,
                name: 'Northwind Analytics',
                domain: 'northwindanalytics.com',
                websiteUrl: 'https://northwindanalytics.com',
                industry: 'Computer Software',
                city: 'Austin',
                state: 'Texas',
                country: 'United States',
              },
              revealed: ['workEmailReveal'],
              creditsCharged: 1,
            },
          },
        ],
        summary: { total: 1, matched: 1, unmatched: 0 },
        dataOptions: ['workEmailReveal'],
        credits: { used: 1, remaining: 9 },
      },
    });
  });

  it('applies each rule with its normalisation, in order', async () => {
    const ws = await t.createWorkspace();
    const { body } = await enrich(ws.apiKey, {
      people: [
        { linkedinUrl: 'http://uk.linkedin.com/in/Luis-Ortega/?trk=public_profile' },
        { firstName: ' amy ', lastName: 'CHEN', companyDomain: 'https://www.NorthwindAnalytics.com/about' },
        { firstName: 'Bob', lastName: 'Stone', companyName: 'Tiny  Bakery, Ltd.' },
        // The email rule comes first: Jane, not the Luis of the LinkedIn URL.
        { email: 'jane.doe@northwindanalytics.com', linkedinUrl: 'https://www.linkedin.com/in/luis-ortega' },
        // An email that finds no one falls through to the next rules.
        { email: 'amy@gmail.com', firstName: 'Amy', lastName: 'Chen', companyName: 'Northwind Analytics Inc' },
        // Carla has no company: only her LinkedIn URL finds her.
        { linkedinUrl: 'linkedin.com/in/carla-ruiz' },
      ],
    });
    expect(body.data.results.map((r) => [r.matchedBy, r.person?.id])).toEqual([
      ['linkedinUrl', luis.id],
      ['nameAndCompanyDomain', amy.id],
      ['nameAndCompanyName', bob.id],
      ['email', jane.id],
      ['nameAndCompanyName', amy.id],
      ['linkedinUrl', carla.id],
    ]);
    expect(body.data.summary).toEqual({ total: 6, matched: 6, unmatched: 0 });
    expect(body.message).toBe('6 of 6 people matched');
  });

  it('answers null with a reason when no rule finds exactly one person', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const { status, body } = await enrich(ws.apiKey, {
      people: [
        { email: 'nobody@northwindanalytics.com' },
        { firstName: 'Jane', lastName: 'Doe', companyDomain: 'brightpathlogistics.com' },
        { firstName: 'Jane', lastName: 'Doe', companyName: 'Brightpath' },
        { firstName: 'John', lastName: 'Smith', companyDomain: 'northwindanalytics.com' },
        { firstName: 'John', lastName: 'Smith', companyName: 'Northwind Analytics' },
        // The namesakes are told apart by an email.
        {
          email: 'jsmith@northwindanalytics.com',
          firstName: 'John',
          lastName: 'Smith',
          companyName: 'Northwind Analytics',
        },
      ],
    });
    expect(status).toBe(200);
    const outcome = body.data.results.map((r) => [r.matched, r.reason, r.person?.id ?? null]);
    expect(outcome).toEqual([
      [false, 'noMatch', null],
      [false, 'noMatch', null],
      [false, 'noMatch', null],
      [false, 'ambiguousMatch', null],
      [false, 'ambiguousMatch', null],
      [true, null, johnB.id],
    ]);
    expect(body.data.results[0]).toEqual({
      input: { email: 'nobody@northwindanalytics.com' },
      matched: false,
      matchedBy: null,
      reason: 'noMatch',
      person: null,
    });
    // Only the match is charged.
    expect(body.data.credits).toEqual({ used: 1, remaining: 9 });
    expect(body.message).toBe('1 of 6 people matched');
  });
});

describe('credits', () => {
  it('charges each data option once per person and workspace, only for data the person has', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const body: Body = {
      people: [{ email: 'jane.doe@northwindanalytics.com' }, { email: 'lortega@brightpathlogistics.com' }],
      dataOptions: ['workEmailReveal', 'mobilePhoneReveal'],
    };
    const first = await enrich(ws.apiKey, body);
    // Jane: email 1 + mobile 5; Luis: email 1 (no mobile phone, so nothing for it).
    expect(first.body.data.results.map((r) => r.person?.creditsCharged)).toEqual([6, 1]);
    expect(first.body.data.results[0].person).toMatchObject({
      email: jane.work_email,
      mobilePhone: jane.mobile_phone,
      revealed: ['workEmailReveal', 'mobilePhoneReveal'],
    });
    expect(first.body.data.results[1].person).toMatchObject({
      email: luis.work_email,
      mobilePhone: null,
      revealed: ['workEmailReveal'],
    });
    expect(first.body.data.credits).toEqual({ used: 7, remaining: 3 });
    expect(await reveals(ws.workspaceId)).toEqual([
      { person_id: jane.id, data_option: 'mobilePhoneReveal' },
      { person_id: jane.id, data_option: 'workEmailReveal' },
      { person_id: luis.id, data_option: 'workEmailReveal' },
    ]);
    const ledger = await t
      .db('credit_ledger')
      .where({ workspace_id: ws.workspaceId })
      .andWhere('amount', '<', 0)
      .select('amount', 'balance_after');
    expect(ledger).toEqual([{ amount: -7, balance_after: 3 }]);

    // Again: already revealed, so free, and the data is still shown.
    const again = await enrich(ws.apiKey, body);
    expect(again.body.data.credits).toEqual({ used: 0, remaining: 3 });
    expect(again.body.data.results[0].person).toMatchObject({ email: jane.work_email, creditsCharged: 0 });

    // Another workspace pays for its own reveal.
    const other = await t.createWorkspace({ credits: 10 });
    const theirs = await enrich(other.apiKey, { people: [{ email: 'jane.doe@northwindanalytics.com' }] });
    expect(theirs.body.data.credits).toEqual({ used: 1, remaining: 9 });
  });

  it('charges a person matched by two inputs once, and counts a reveal made by a search', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const search = await post('/v1/mixed_people/search', ws.apiKey, { companyDomains: ['brightpathlogistics.com'] });
    expect((await readJson<Success<'/v1/mixed_people/search', 'post'>>(search)).data.credits).toEqual({
      used: 1,
      remaining: 9,
    });

    const { body } = await enrich(ws.apiKey, {
      people: [
        { email: 'amy.chen@northwindanalytics.com' },
        { firstName: 'Amy', lastName: 'Chen', companyDomain: 'northwindanalytics.com' },
        { linkedinUrl: 'https://www.linkedin.com/in/luis-ortega' },
      ],
    });
    expect(body.data.results.map((r) => [r.person?.id, r.person?.creditsCharged])).toEqual([
      [amy.id, 1],
      [amy.id, 0],
      [luis.id, 0],
    ]);
    expect(body.data.credits).toEqual({ used: 1, remaining: 8 });
  });

  it('answers 402 and charges and reveals nothing when the balance cannot cover the matches', async () => {
    const ws = await t.createWorkspace({ credits: 5 });
    const res = await enrich<V1ErrorBody>(ws.apiKey, {
      people: [{ email: 'jane.doe@northwindanalytics.com' }, { email: 'nobody@acme.com' }],
      dataOptions: ['workEmailReveal', 'mobilePhoneReveal'],
    });
    expect(res).toEqual({
      status: 402,
      body: { error: 'Insufficient credits: this request needs 6 credits and the balance is 5.' },
    });
    expect(await reveals(ws.workspaceId)).toEqual([]);
    expect(await balance(ws.workspaceId)).toBe(5);
    expect(await t.db('credit_ledger').where({ workspace_id: ws.workspaceId }).andWhere('amount', '<', 0)).toEqual([]);

    const v2 = await enrich<ErrorBody>(
      ws.apiKey,
      { people: [{ email: 'jane.doe@northwindanalytics.com' }], dataOptions: ['mobilePhoneReveal', 'workEmailReveal'] },
      '/v2/enrich/by-details',
    );
    expect(v2.status).toBe(402);
    expect(v2.body).toMatchObject({ code: 'insufficient_credits', statusCode: 402, details: [] });

    // Asking for less fits: the work email alone costs 1.
    const fits = await enrich(ws.apiKey, { people: [{ email: 'jane.doe@northwindanalytics.com' }] });
    expect(fits.body.data.credits).toEqual({ used: 1, remaining: 4 });
  });

  it('reveals nothing and charges nothing with dataOptions []', async () => {
    const ws = await t.createWorkspace({ credits: 0 });
    const { status, body } = await enrich(ws.apiKey, {
      people: [{ email: 'jane.doe@northwindanalytics.com' }],
      dataOptions: [],
    });
    expect(status).toBe(200);
    expect(body.data.results[0].person).toMatchObject({ id: jane.id, revealed: [], creditsCharged: 0 });
    expect(body.data.results[0].person).not.toHaveProperty('email');
    expect(body.data.credits).toEqual({ used: 0, remaining: 0 });
  });

  it('shows the full company and LinkedIn URL with fullContactAndCompany', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const { body } = await enrich(
      ws.apiKey,
      { people: [{ email: 'lortega@brightpathlogistics.com' }], dataOptions: ['fullContactAndCompany'] },
      '/v2/enrich/by-details',
    );
    expect(body.data.results[0].person).toMatchObject({
      linkedinUrl: luis.linkedin_url,
      company: { id: brightpath.id, employeeCount: 1200, employeeRange: '1001-5000', technologies: ['hubspot'] },
      revealed: ['fullContactAndCompany'],
      creditsCharged: 1,
    });
    expect(body.data.results[0].person).not.toHaveProperty('email');
  });
});

describe('limits and validation', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => ({ email: `person${i}@nowhere.io` }));

  it('takes 10 inputs in v1 and 100 in v2', async () => {
    const ws = await t.createWorkspace();
    expect((await enrich(ws.apiKey, { people: many(10) })).status).toBe(200);
    const v1 = await enrich<V1ErrorBody>(ws.apiKey, { people: many(11) });
    expect(v1.status).toBe(400);
    expect(Object.keys(v1.body)).toEqual(['error']);
    expect(v1.body.error).toMatch(/^request\/body\/people must NOT have more than 10 items/);

    const v2 = await enrich(ws.apiKey, { people: many(100) }, '/v2/enrich/by-details');
    expect(v2.status).toBe(200);
    expect(v2.body.data.summary).toEqual({ total: 100, matched: 0, unmatched: 100 });
    expect(v2.body.data.credits.used).toBe(0);
    const tooMany = await enrich<ErrorBody>(ws.apiKey, { people: many(101) }, '/v2/enrich/by-details');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.details).toEqual([expect.objectContaining({ field: 'body.people', location: 'body' })]);
  });

  it.each([
    ['no people', {}],
    ['an empty list', { people: [] }],
    ['a first name alone', { people: [{ firstName: 'Jane' }] }],
    ['a name without a company', { people: [{ firstName: 'Jane', lastName: 'Doe' }] }],
    ['a malformed email', { people: [{ email: 'jane.doe' }] }],
    ['an unknown field', { people: [{ email: 'jane.doe@northwindanalytics.com', phone: '+1 512 555 0199' }] }],
    ['an unknown data option', { people: [{ email: 'jane.doe@northwindanalytics.com' }], dataOptions: ['everything'] }],
  ])('rejects %s with 400 in both versions', async (_name, body) => {
    const ws = await t.createWorkspace();
    const v1 = await post('/v1/people_enrichment/peopleEnrichment', ws.apiKey, body);
    expect(v1.status).toBe(400);
    expect(Object.keys(await readJson<V1ErrorBody>(v1))).toEqual(['error']);
    const v2 = await post('/v2/enrich/by-details', ws.apiKey, body);
    expect(v2.status).toBe(400);
    const json = await readJson<ErrorBody>(v2);
    expect(json.code).toBe('validation_error');
    expect(json.details.length).toBeGreaterThan(0);
    expect(json.details.every((d) => d.field.startsWith('body'))).toBe(true);
  });

  it('rejects an address that is not a LinkedIn profile, and a company domain that is not a domain, naming the field', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const res = await enrich<ErrorBody>(
      ws.apiKey,
      {
        people: [
          { email: 'jane.doe@northwindanalytics.com' },
          { linkedinUrl: 'https://twitter.com/janedoe' },
          { firstName: 'A', lastName: 'B', companyDomain: 'not a domain' },
        ],
      },
      '/v2/enrich/by-details',
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(
      'people.1.linkedinUrl must be a LinkedIn profile address such as https://www.linkedin.com/in/jane-doe.',
    );
    expect(res.body.details.map((d) => d.field)).toEqual(['body.people.1.linkedinUrl', 'body.people.2.companyDomain']);
    // Nothing was charged for the valid input either.
    expect(await balance(ws.workspaceId)).toBe(10);
  });

  it('serves v1 under /v2 too, and by-details only under /v2', async () => {
    const ws = await t.createWorkspace();
    const alias = await enrich(
      ws.apiKey,
      { people: [{ email: 'nobody@nowhere.io' }] },
      '/v2/people_enrichment/peopleEnrichment',
    );
    expect(alias.status).toBe(200);
    expect((await post('/v1/enrich/by-details', ws.apiKey, { people: [{ email: 'nobody@nowhere.io' }] })).status).toBe(
      404,
    );
  });
});
