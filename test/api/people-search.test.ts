import { expect } from '@jest/globals';
import { readJson, type ErrorBody, type Success, type V1ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer } from '../helpers/server';
import type { LedgerRow } from '../../server/modules/credits/store';
import { statementsDuring } from '../helpers/statements';
import { amy, bakery, bob, carla, insertFixtures, jane, luis, northwind } from './people-search-fixtures';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
});
afterAll(() => t.close());

type Body = Record<string, unknown>;
/** v1 and v2 answer the same success body; a test that expects an error reads it as `search<ErrorBody>`. */
async function search<T = Success<'/v1/mixed_people/search', 'post'>>(
  apiKey: string,
  body: Body,
  version: 'v1' | 'v2' = 'v1',
) {
  const res = await t.fetch(`/${version}/mixed_people/search`, {
    method: 'POST',
    apiKey,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await readJson<T>(res) };
}
const ids = (body: { data: { items: { id: string }[] } }) => body.data.items.map((p) => p.id);
const balance = async (workspaceId: string) =>
  Number(
    (await t.db('workspaces').where({ id: workspaceId }).first<{ credit_balance: number }>('credit_balance'))
      .credit_balance,
  );
const reveals = (workspaceId: string) =>
  t
    .db('people_reveals')
    .where({ workspace_id: workspaceId })
    .orderBy(['person_id', 'data_option'])
    .select('person_id', 'data_option');

describe('POST /v1/mixed_people/search: reveals and credits', () => {
  it('reveals work emails by default, charges 1 per email, and shows the basic company', async () => {
    const ws = await t.createWorkspace({ credits: 50 });
    const { data, response } = await ws.client.POST('/v1/mixed_people/search', {
      body: { titles: ['sales director'] },
    });
    expect(response.status).toBe(200);
    expect(data!.message).toBe('People found');
    expect(data!.data.dataOptions).toEqual(['workEmailReveal']);
    expect(data!.data.credits).toEqual({ used: 2, remaining: 48 });
    expect(data!.data.pagination).toEqual({ page: 1, perPage: 25, totalEntries: 2, totalPages: 1 });
    expect(data!.data.items).toEqual([
      {
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
      expect.objectContaining({
        id: luis.id,
        email: 'lortega@brightpathlogistics.com',
        emailStatus: 'likely',
        hasMobilePhone: false,
        revealed: ['workEmailReveal'],
        creditsCharged: 1,
      }),
    ]);
    expect(data!.data.items[1]).not.toHaveProperty('mobilePhone');
    expect(data!.data.items[1]).not.toHaveProperty('linkedinUrl');
    expect(await reveals(ws.workspaceId)).toEqual([
      { person_id: jane.id, data_option: 'workEmailReveal' },
      { person_id: luis.id, data_option: 'workEmailReveal' },
    ]);
    const ledger = await t
      .db<LedgerRow>('credit_ledger')
      .where({ workspace_id: ws.workspaceId })
      .orderBy('created_at', 'desc')
      .first();
    expect(ledger).toMatchObject({ amount: -2, balance_after: 48 });
  });

  it('shows an already revealed person again for free, and charges another workspace separately', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    await search(ws.apiKey, { companyDomains: ['northwindanalytics.com'] });
    expect(await balance(ws.workspaceId)).toBe(8);
    const again = await search(ws.apiKey, { companyDomains: ['northwindanalytics.com'] });
    expect(again.body.data.credits).toEqual({ used: 0, remaining: 8 });
    expect(again.body.data.items.map((p) => [p.email, p.creditsCharged])).toEqual([
      ['jane.doe@northwindanalytics.com', 0],
      ['amy.chen@northwindanalytics.com', 0],
    ]);
    const other = await t.createWorkspace({ credits: 10 });
    expect((await search(other.apiKey, { companyDomains: ['northwindanalytics.com'] })).body.data.credits).toEqual({
      used: 2,
      remaining: 8,
    });
  });

  it('shows a page already paid for without writing anything, its companies read with the page', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    await search(ws.apiKey, { companyDomains: ['northwindanalytics.com'] });
    const { result: again, statements } = await statementsDuring(t.db, () =>
      search(ws.apiKey, { companyDomains: ['northwindanalytics.com'] }),
    );
    expect(again.body.data.credits).toEqual({ used: 0, remaining: 8 });
    expect(again.body.data.items.map((p) => p.company?.id)).toEqual([northwind.id, northwind.id]);
    expect(statements.filter((sql) => /^insert into "people_reveals"/.test(sql))).toEqual([]);
    expect(statements.filter((sql) => sql.includes('"companies"'))).toHaveLength(1);
  });

  it('charges each option only for people who have that data (5 per mobile, 1 per full contact)', async () => {
    const ws = await t.createWorkspace({ credits: 100 });
    const { status, body } = await search(ws.apiKey, { dataOptions: ['mobilePhoneReveal', 'fullContactAndCompany'] });
    expect(status).toBe(200);
    const byId = Object.fromEntries(body.data.items.map((p) => [p.id, p]));
    expect(byId[jane.id]).toMatchObject({
      mobilePhone: '+1 512 555 0199',
      linkedinUrl: 'https://www.linkedin.com/in/jane-doe',
      creditsCharged: 6,
      revealed: ['mobilePhoneReveal', 'fullContactAndCompany'],
    });
    expect(byId[jane.id]).not.toHaveProperty('email');
    expect(byId[jane.id].company).toEqual({
      id: northwind.id,
      name: 'Northwind Analytics',
      domain: 'northwindanalytics.com',
      websiteUrl: 'https://northwindanalytics.com',
      industry: 'Computer Software',
      city: 'Austin',
      state: 'Texas',
      country: 'United States',
      employeeCount: 180,
      employeeRange: '51-200',
      revenueRange: '$10M-$50M',
      foundedYear: 2012,
      keywords: ['data analytics', 'business intelligence'],
      technologies: ['salesforce', 'aws'],
      linkedinUrl: 'https://www.linkedin.com/company/northwind-analytics',
      phone: '+1 512 555 0148',
      description: 'Dashboards for retail chains.',
    });
    expect(byId[amy.id]).toMatchObject({ mobilePhone: '+44 20 7946 0123', linkedinUrl: null, creditsCharged: 6 });
    expect(byId[luis.id]).toMatchObject({ mobilePhone: null, creditsCharged: 1, revealed: ['fullContactAndCompany'] });
    expect(byId[bob.id]).toMatchObject({
      mobilePhone: null,
      linkedinUrl: null,
      creditsCharged: 1,
      company: expect.objectContaining({ id: bakery.id }),
    });
    expect(byId[carla.id]).toMatchObject({
      company: null,
      linkedinUrl: 'https://www.linkedin.com/in/carla-ruiz',
      creditsCharged: 1,
    });
    expect(body.data.credits).toEqual({ used: 15, remaining: 85 });
    expect(await reveals(ws.workspaceId)).toHaveLength(7);
  });

  it('reveals nothing and charges nothing with dataOptions []', async () => {
    const ws = await t.createWorkspace({ credits: 0 });
    const { status, body } = await search(ws.apiKey, { dataOptions: [] });
    expect(status).toBe(200);
    expect(body.data.items).toHaveLength(5);
    for (const p of body.data.items) {
      expect(p).not.toHaveProperty('email');
      expect(p).not.toHaveProperty('mobilePhone');
      expect(p).not.toHaveProperty('linkedinUrl');
      expect(p.revealed).toEqual([]);
    }
    expect(body.data.credits).toEqual({ used: 0, remaining: 0 });
    expect(await reveals(ws.workspaceId)).toEqual([]);
  });

  it('answers 402 and charges and reveals nothing when the balance cannot cover the page', async () => {
    const ws = await t.createWorkspace({ credits: 3 });
    const v1 = await search<V1ErrorBody>(ws.apiKey, { dataOptions: ['workEmailReveal', 'mobilePhoneReveal'] });
    expect(v1.status).toBe(402);
    expect(v1.body).toEqual({ error: 'Insufficient credits: this request needs 13 credits and the balance is 3.' });
    const v2 = await search<ErrorBody>(ws.apiKey, { dataOptions: ['mobilePhoneReveal'] }, 'v2');
    expect(v2.status).toBe(402);
    expect(v2.body).toMatchObject({
      code: 'insufficient_credits',
      statusCode: 402,
      error: 'Insufficient credits: this request needs 10 credits and the balance is 3.',
    });
    expect(await balance(ws.workspaceId)).toBe(3);
    expect(await reveals(ws.workspaceId)).toEqual([]);
    expect(await t.db('credit_ledger').where({ workspace_id: ws.workspaceId }).where('amount', '<', 0)).toEqual([]);
    // A page the balance covers still works.
    expect((await search(ws.apiKey, { titles: ['sales director'] })).body.data.credits).toEqual({
      used: 2,
      remaining: 1,
    });
  });

  it('never takes a balance below zero under concurrent searches', async () => {
    const ws = await t.createWorkspace({ credits: 7 });
    // Five searches each revealing Jane's and Amy's mobiles (10 credits) cannot all pass; with 7 credits none can.
    const single = await Promise.all(
      [jane, amy, jane, amy, jane, amy].map((p) =>
        search(ws.apiKey, {
          companyDomains: ['northwindanalytics.com'],
          dataOptions: ['mobilePhoneReveal'],
          titles: [p.title!],
        }),
      ),
    );
    const ok = single.filter((r) => r.status === 200);
    expect(single.every((r) => r.status === 200 || r.status === 402)).toBe(true);
    // Jane (5) or Amy (5) fits in 7, both do not: exactly one person was charged, once.
    const used = ok.reduce((n, r) => n + r.body.data.credits.used, 0);
    expect(used).toBe(5);
    expect(await balance(ws.workspaceId)).toBe(2);
    expect(await reveals(ws.workspaceId)).toHaveLength(1);
  });
});

describe('POST /v1/mixed_people/search: filters', () => {
  let key: string;
  beforeAll(async () => {
    key = (await t.createWorkspace({ credits: 1000 })).apiKey;
  });
  const cases: [string, Body, string[]][] = [
    ['titles by words and stems', { titles: ['director sales'] }, [jane.id, luis.id]],
    ['several titles (any)', { titles: ['head of sales', 'software engineers'] }, [amy.id, bob.id]],
    ['seniorities', { seniorities: ['head', 'vp'] }, [carla.id, bob.id]],
    ['departments', { departments: ['engineering', 'marketing'] }, [amy.id, carla.id]],
    ['locations: a state', { locations: ['texas'] }, [jane.id, luis.id]],
    ['locations: a country and a city', { locations: ['United Kingdom', 'Madrid'] }, [amy.id, carla.id, bob.id]],
    ['keywords across title and company', { keywords: 'business intelligence' }, [jane.id, amy.id]],
    [
      'company domains, normalized',
      { companyDomains: ['https://www.NorthwindAnalytics.com/about'] },
      [jane.id, amy.id],
    ],
    ['company names by words', { companyNames: ['brightpath', 'tiny'] }, [luis.id, bob.id]],
    ['employee ranges', { employeeRanges: ['1001-5000'] }, [luis.id]],
    ['industries, case-insensitive', { industries: ['computer SOFTWARE'] }, [jane.id, amy.id]],
    ['email statuses', { emailStatuses: ['unavailable'] }, [carla.id, bob.id]],
    [
      'combined filters (AND)',
      { titles: ['sales'], locations: ['Texas'], employeeRanges: ['51-200'], seniorities: ['director'] },
      [jane.id],
    ],
    ['no match', { titles: ['astronaut'] }, []],
  ];
  it.each(cases)('%s', async (_name, filters, expected) => {
    const { status, body } = await search(key, { ...filters, dataOptions: [] });
    expect(status).toBe(200);
    expect(ids(body)).toEqual(expected);
    expect(body.data.pagination.totalEntries).toBe(expected.length);
  });

  it('orders by relevance (profile score) then id, and pages through the result', async () => {
    const all = ids((await search(key, { dataOptions: [] })).body);
    expect(all).toEqual([jane.id, luis.id, amy.id, carla.id, bob.id]);
    const page2 = await search(key, { dataOptions: [], perPage: 2, page: 2 });
    expect(ids(page2.body)).toEqual([amy.id, carla.id]);
    expect(page2.body.data.pagination).toEqual({ page: 2, perPage: 2, totalEntries: 5, totalPages: 3 });
    const past = await search(key, { dataOptions: [], perPage: 2, page: 4 });
    expect(past.body.data.items).toEqual([]);
  });
});

describe('POST /v1/mixed_people/search: totalEntries of a repeated search', () => {
  it('reuses the count of the same filters for SEARCH_COUNT_CACHE_SECONDS (60), then counts again', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const filters = { companyDomains: ['countcache.example'], dataOptions: [] };
    expect((await search(ws.apiKey, filters)).body.data.pagination.totalEntries).toBe(0);

    // An import by the admin CLI, in another process (removed at the end: the other tests share the people).
    const probe = {
      ...jane,
      id: '0192f0c4-ffff-7000-8000-00000000c0de',
      title: 'Count probe',
      seniority: null,
      department: null,
      company_id: null,
      company_domain: 'countcache.example',
      work_email: null,
    };
    await t.db('people').insert(probe);
    const { result: page2, statements } = await statementsDuring(t.db, () =>
      search(ws.apiKey, { ...filters, page: 2, perPage: 1 }),
    );
    expect(page2.body.data.pagination.totalEntries).toBe(0);
    expect(statements.filter((sql) => /count\(|^explain/i.test(sql))).toEqual([]);

    t.clock.advance(61_000);
    const later = await search(ws.apiKey, filters);
    expect(later.body.data.pagination.totalEntries).toBe(1);
    expect(ids(later.body)).toEqual([probe.id]);
    await t.db('people').where({ id: probe.id }).delete();
  });
});

describe('POST /v1/mixed_people/search: validation', () => {
  let key: string;
  beforeAll(async () => {
    key = (await t.createWorkspace({ credits: 10 })).apiKey;
  });
  it.each([
    ['a page beyond 500', { page: 501 }, 'body.page'],
    ['perPage above 100', { perPage: 101 }, 'body.perPage'],
    ['an unknown data option', { dataOptions: ['emailReveal'] }, 'body.dataOptions.0'],
    ['a repeated data option', { dataOptions: ['workEmailReveal', 'workEmailReveal'] }, 'body.dataOptions'],
    ['dataOptions not an array', { dataOptions: 'workEmailReveal' }, 'body.dataOptions'],
    ['an unknown seniority', { seniorities: ['boss'] }, 'body.seniorities.0'],
    ['an unknown filter', { jobTitles: ['ceo'] }, 'body.jobTitles'],
    ['an invalid domain', { companyDomains: ['not a domain'] }, 'body.companyDomains.0'],
  ])('rejects %s with 400 (v1 and v2 bodies)', async (_name, body, field) => {
    const v1 = await search<V1ErrorBody>(key, body);
    expect(v1.status).toBe(400);
    expect(Object.keys(v1.body)).toEqual(['error']);
    const v2 = await search<ErrorBody>(key, body, 'v2');
    expect(v2.status).toBe(400);
    expect(v2.body.code).toBe('validation_error');
    expect(v2.body.details.map((d) => d.field)).toContain(field);
  });
});

describe('revealWorkEmails (used by lists)', () => {
  it('returns emails, charges first reveals only, and leaves out unknown ids', async () => {
    const ws = await t.createWorkspace({ credits: 5 });
    const unknown = '0192f0c5-ffff-7000-8000-00000000ffff';
    const first = await t.db.transaction((trx) =>
      t.services.leads.revealWorkEmails(trx, ws.workspaceId, [jane.id, bob.id, unknown]),
    );
    expect([...first.emails]).toEqual([
      [jane.id, 'jane.doe@northwindanalytics.com'],
      [bob.id, null],
    ]);
    expect(first).toMatchObject({ creditsUsed: 1, balance: 4 });
    const again = await t.db.transaction((trx) =>
      t.services.leads.revealWorkEmails(trx, ws.workspaceId, [jane.id, luis.id]),
    );
    expect(again).toMatchObject({ creditsUsed: 1, balance: 3 });
    // The search now shows both as already revealed.
    expect((await search(ws.apiKey, { titles: ['sales director'] })).body.data.credits.used).toBe(0);
  });

  it('throws 402 and keeps nothing when the balance is short', async () => {
    const ws = await t.createWorkspace({ credits: 1 });
    await expect(
      t.db.transaction((trx) => t.services.leads.revealWorkEmails(trx, ws.workspaceId, [jane.id, luis.id])),
    ).rejects.toMatchObject({ kind: 'paymentRequired' });
    expect(await reveals(ws.workspaceId)).toEqual([]);
    expect(await balance(ws.workspaceId)).toBe(1);
  });
});
