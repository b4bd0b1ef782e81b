import { readJson, type ErrorBody, type Success, type V1ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer } from '../helpers/server';
import { statementsDuring } from '../helpers/statements';
import { bakery, brightpath, insertFixtures, northwind } from './people-search-fixtures';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
});
afterAll(() => t.close());

type Body = Record<string, unknown>;
/** v1 and v2 answer the same success body; a test that expects an error reads it as `find<ErrorBody>`. */
async function find<T = Success<'/v1/company/find', 'post'>>(apiKey: string, body: Body, version: 'v1' | 'v2' = 'v1') {
  const res = await t.fetch(`/${version}/company/find`, {
    method: 'POST',
    apiKey,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await readJson<T>(res) };
}
const ids = (body: { data: { items: { id: string }[] } }) => body.data.items.map((c) => c.id);
const balance = async (workspaceId: string) =>
  Number(
    (await t.db('workspaces').where({ id: workspaceId }).first<{ credit_balance: number }>('credit_balance'))
      .credit_balance,
  );

const northwindIdentity = {
  id: northwind.id,
  name: 'Northwind Analytics',
  domain: 'northwindanalytics.com',
  websiteUrl: 'https://northwindanalytics.com',
  industry: 'Computer Software',
  city: 'Austin',
  state: 'Texas',
  country: 'United States',
};

describe('POST /v1/company/find: data options', () => {
  it('basic returns the identity fields for free', async () => {
    const ws = await t.createWorkspace({ credits: 0 });
    const { data, response } = await ws.client.POST('/v1/company/find', {
      body: { domains: ['northwindanalytics.com'], dataOptions: ['basic'] },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toEqual({
      items: [{ ...northwindIdentity, revealed: false, creditsCharged: 0 }],
      pagination: { page: 1, perPage: 25, totalEntries: 1, totalPages: 1 },
      dataOptions: ['basic'],
      credits: { used: 0, remaining: 0 },
    });
  });

  it('full returns every field, charges 1 per company once, and is free to see again', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const first = await find(ws.apiKey, { locations: ['texas'], dataOptions: ['full'] });
    expect(first.status).toBe(200);
    expect(first.body.data.items[0]).toEqual({
      ...northwindIdentity,
      employeeCount: 180,
      employeeRange: '51-200',
      revenueRange: '$10M-$50M',
      foundedYear: 2012,
      keywords: ['data analytics', 'business intelligence'],
      technologies: ['salesforce', 'aws'],
      linkedinUrl: 'https://www.linkedin.com/company/northwind-analytics',
      phone: '+1 512 555 0148',
      description: 'Dashboards for retail chains.',
      revealed: true,
      creditsCharged: 1,
    });
    expect(ids(first.body)).toEqual([northwind.id, brightpath.id]);
    expect(first.body.data.credits).toEqual({ used: 2, remaining: 8 });
    const { result: again, statements } = await statementsDuring(t.db, () =>
      find(ws.apiKey, { locations: ['texas'], dataOptions: ['full'] }),
    );
    expect(again.body.data.credits).toEqual({ used: 0, remaining: 8 });
    // Seen in full before: nothing to record, so nothing is written.
    expect(statements.filter((sql) => /^insert into "company_reveals"/.test(sql))).toEqual([]);
    expect(again.body.data.items.map((c) => c.creditsCharged)).toEqual([0, 0]);
    expect(await t.db('company_reveals').where({ workspace_id: ws.workspaceId }).pluck('company_id')).toHaveLength(2);
  });

  it('charges nothing for a company with no data beyond its identity', async () => {
    const ws = await t.createWorkspace({ credits: 1 });
    const { body } = await find(ws.apiKey, { domains: ['tinybakery.co'], dataOptions: ['full'] });
    expect(body.data.items).toEqual([
      expect.objectContaining({
        id: bakery.id,
        employeeCount: null,
        keywords: [],
        technologies: [],
        creditsCharged: 0,
      }),
    ]);
    expect(body.data.credits).toEqual({ used: 0, remaining: 1 });
  });

  it('answers 402 and records nothing when the balance cannot cover the page', async () => {
    const ws = await t.createWorkspace({ credits: 1 });
    const res = await find(ws.apiKey, { dataOptions: ['full'] });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'Insufficient credits: this request needs 2 credits and the balance is 1.' });
    expect(await balance(ws.workspaceId)).toBe(1);
    expect(await t.db('company_reveals').where({ workspace_id: ws.workspaceId })).toEqual([]);
  });

  it.each([
    ['missing dataOptions', {}, 'body.dataOptions'],
    ['empty dataOptions', { dataOptions: [] }, 'body.dataOptions'],
    ['two values', { dataOptions: ['basic', 'full'] }, 'body.dataOptions'],
    ['an unknown value', { dataOptions: ['everything'] }, 'body.dataOptions.0'],
    ['a string instead of an array', { dataOptions: 'basic' }, 'body.dataOptions'],
    ['a page beyond 500', { dataOptions: ['basic'], page: 501 }, 'body.page'],
    ['an invalid domain', { dataOptions: ['basic'], domains: ['nope'] }, 'body.domains.0'],
  ])('rejects %s with 400 (v1 and v2 bodies)', async (_name, body, field) => {
    const ws = await t.createWorkspace();
    const v1 = await find<V1ErrorBody>(ws.apiKey, body);
    expect(v1.status).toBe(400);
    expect(Object.keys(v1.body)).toEqual(['error']);
    const v2 = await find<ErrorBody>(ws.apiKey, body, 'v2');
    expect(v2.status).toBe(400);
    expect(v2.body.details.map((d) => d.field)).toContain(field);
  });
});

describe('POST /v1/company/find: filters', () => {
  let key: string;
  beforeAll(async () => {
    key = (await t.createWorkspace()).apiKey;
  });
  it.each([
    ['names by words', { names: ['northwind'] }, [northwind.id]],
    ['domains, normalized', { domains: ['WWW.BrightpathLogistics.com'] }, [brightpath.id]],
    ['industries', { industries: ['food & beverages', 'computer software'] }, [northwind.id, bakery.id]],
    ['employee ranges', { employeeRanges: ['1001-5000', '1-10'] }, [brightpath.id]],
    ['locations', { locations: ['United Kingdom'] }, [bakery.id]],
    ['keywords', { keywords: 'warehousing' }, [brightpath.id]],
    ['technologies, any, case-insensitive', { technologies: ['HubSpot', 'aws'] }, [northwind.id, brightpath.id]],
    ['combined', { locations: ['Texas'], technologies: ['aws'] }, [northwind.id]],
  ])('%s', async (_name, filters, expected) => {
    const { status, body } = await find(key, { ...filters, dataOptions: ['basic'] });
    expect(status).toBe(200);
    expect(ids(body)).toEqual(expected);
  });

  it('pages through the result in relevance order', async () => {
    const all = ids((await find(key, { dataOptions: ['basic'] })).body);
    expect(all).toHaveLength(3);
    const page2 = await find(key, { dataOptions: ['basic'], perPage: 1, page: 2 });
    expect(ids(page2.body)).toEqual([all[1]]);
    expect(page2.body.data.pagination).toEqual({ page: 2, perPage: 1, totalEntries: 3, totalPages: 3 });
  });
});
