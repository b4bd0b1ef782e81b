import { readJson, type ErrorBody, type Success } from '../helpers/bodies';
import http, { type IncomingMessage } from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parse } from 'csv-parse/sync';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { bakery, insertFixtures, jane, northwind } from './people-search-fixtures';

let t: TestServer;
let ws: TestWorkspace;
/** Cells a spreadsheet would run as formulas, plus quotes, commas and line breaks. */
const evil = {
  ...jane,
  id: '0192f0c5-00ee-7000-8000-0000000000ee',
  first_name: '=HYPERLINK("http://evil.example","click")',
  last_name: "O'Brien, Jr.",
  title: 'Head of\nGrowth',
  department: null,
  seniority: null,
  city: '+cmd',
  state: '-2+3',
  country: '@SUM(A1)',
  linkedin_url: '\thttps://www.linkedin.com/in/evil',
  company_id: null,
  company_name: null,
  company_domain: null,
  company_industry: null,
  company_employee_count: null,
  work_email: 'evil@evil.example',
};
const HEADER =
  'id,firstName,lastName,title,seniority,department,city,state,country,emailStatus,email,mobilePhone,linkedinUrl,companyId,companyName,companyDomain,companyWebsiteUrl,companyIndustry,revealed,addedAt';

beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
  await t.db('people').insert(evil);
  ws = await t.createWorkspace();
});
afterAll(() => t.close());

async function list(kind: 'people' | 'company', ids: string[]) {
  const created = await ws.client.POST(kind === 'people' ? '/v2/list/create/people' : '/v2/list/create/company', {
    body: { name: `Export ${ids.length} ${Math.random()}` },
  });
  const listId = created.data!.data.list.id;
  if (ids.length && kind === 'people') await ws.client.POST('/v2/list/add/leads', { body: { listId, personIds: ids } });
  if (ids.length && kind === 'company')
    await ws.client.POST('/v2/list/add/companies', { body: { listId, companyIds: ids } });
  return listId;
}

const exportOf = (listId: string, format?: string, w = ws) =>
  t.fetch(`/v2/list/export?listId=${listId}${format ? `&format=${format}` : ''}`, { apiKey: w.apiKey });

describe('GET /v2/list/export', () => {
  it('exports a people list as CSV, escaped, protected against formulas, with only revealed fields', async () => {
    const listId = await list('people', [jane.id, evil.id]);
    const addedAt = t.clock.now().toISOString();
    await t.db('people_reveals').insert({
      workspace_id: ws.workspaceId,
      person_id: jane.id,
      data_option: 'workEmailReveal',
      revealed_at: t.clock.now(),
    });
    const res = await exportOf(listId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="list-${listId}.csv"`);
    expect(await res.text()).toBe(
      [
        HEADER,
        `${jane.id},Jane,Doe,Sales Director,director,sales,Austin,Texas,United States,verified,jane.doe@northwindanalytics.com,,,${northwind.id},Northwind Analytics,northwindanalytics.com,https://northwindanalytics.com,Computer Software,workEmailReveal,${addedAt}`,
        `${evil.id},"'=HYPERLINK(""http://evil.example"",""click"")","O'Brien, Jr.","Head of\nGrowth",,,'+cmd,'-2+3,'@SUM(A1),verified,,,,,,,,,,${addedAt}`,
        '',
      ].join('\n'),
    );
  });

  it('escapes a revealed cell that starts with a tab, and round-trips through a CSV parser', async () => {
    const listId = await list('people', [evil.id]);
    await t.db('people_reveals').insert(
      ['workEmailReveal', 'fullContactAndCompany'].map((o) => ({
        workspace_id: ws.workspaceId,
        person_id: evil.id,
        data_option: o,
        revealed_at: t.clock.now(),
      })),
    );
    const [row] = parse(await (await exportOf(listId)).text(), { columns: true });
    expect(row).toMatchObject({
      firstName: `'${evil.first_name}`,
      lastName: evil.last_name,
      title: 'Head of\nGrowth',
      email: 'evil@evil.example',
      linkedinUrl: `'${evil.linkedin_url}`,
      revealed: 'workEmailReveal|fullContactAndCompany',
    });
  });

  it('exports JSON in the envelope, exactly as the members read', async () => {
    const listId = await list('people', [jane.id, evil.id]);
    const res = await exportOf(listId, 'json');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await readJson<Success<'/v2/list/export', 'get'>>(res);
    const read = await ws.client.GET('/v2/list/leads', { params: { query: { listId } } });
    const got = await ws.client.GET('/v2/list/get', { params: { query: { listId } } });
    expect(body).toEqual({
      status: 'success',
      success: true,
      message: 'List exported',
      data: { list: got.data!.data.list, items: read.data!.data.items },
    });
  });

  it('exports a company list, full fields only when seen in full', async () => {
    const listId = await list('company', [northwind.id, bakery.id]);
    const addedAt = t.clock.now().toISOString();
    await t
      .db('company_reveals')
      .insert({ workspace_id: ws.workspaceId, company_id: northwind.id, revealed_at: t.clock.now() });
    const text = await (await exportOf(listId, 'csv')).text();
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      'id,name,domain,websiteUrl,industry,city,state,country,employeeCount,employeeRange,revenueRange,foundedYear,keywords,technologies,linkedinUrl,phone,description,revealed,addedAt',
    );
    const rows = new Map(lines.slice(1, -1).map((l) => [l.slice(0, 36), l]));
    expect(rows.get(northwind.id)).toBe(
      `${northwind.id},Northwind Analytics,northwindanalytics.com,https://northwindanalytics.com,Computer Software,Austin,Texas,United States,180,51-200,$10M-$50M,2012,data analytics|business intelligence,salesforce|aws,https://www.linkedin.com/company/northwind-analytics,'+1 512 555 0148,Dashboards for retail chains.,true,${addedAt}`,
    );
    expect(rows.get(bakery.id)).toBe(
      `${bakery.id},Tiny Bakery,tinybakery.co,,Food & Beverages,London,England,United Kingdom,,,,,,,,,,false,${addedAt}`,
    );
    const json = await readJson<Success<'/v2/list/export', 'get'>>(await exportOf(listId, 'json'));
    expect(json.data.items).toHaveLength(2);
  });

  it('exports an empty list as a header only, or an empty items array', async () => {
    const listId = await list('people', []);
    expect(await (await exportOf(listId)).text()).toBe(HEADER + '\n');
    expect((await readJson<Success<'/v2/list/export', 'get'>>(await exportOf(listId, 'json'))).data.items).toEqual([]);
  });

  it('answers 404 for another workspace list and 400 for an unknown format', async () => {
    const listId = await list('people', [jane.id]);
    const other = await t.createWorkspace();
    const res = await exportOf(listId, undefined, other);
    expect(res.status).toBe(404);
    expect((await readJson<ErrorBody>(res)).error).toBe('List not found.');
    const bad = await exportOf(listId, 'xml');
    expect(bad.status).toBe(400);
    expect((await readJson<ErrorBody>(bad)).details[0].field).toBe('query.format');
  });

  it('streams a 100,000-member list in bounded memory', async () => {
    const size = 100_000;
    const created = await ws.client.POST('/v2/list/create/people', { body: { name: 'Huge' } });
    const listId = created.data!.data.list.id;
    await t.db.raw(
      `INSERT INTO people (id, first_name, last_name, title, city, country, work_email, email_status, score, created_at, updated_at)
       SELECT gen_random_uuid(), 'First' || g, 'Last' || g, 'Account Executive', 'Austin', 'United States',
              'person' || g || '@bulk.example', 'verified', 0, now(), now()
       FROM generate_series(1, ?) g`,
      [size],
    );
    await t.db.raw(
      `INSERT INTO list_people (list_id, person_id, added_at) SELECT ?, id, now() FROM people WHERE work_email LIKE '%@bulk.example'`,
      [listId],
    );
    await t.db.raw(
      `INSERT INTO people_reveals (workspace_id, person_id, data_option, revealed_at) SELECT ?, id, 'workEmailReveal', now() FROM people WHERE work_email LIKE '%@bulk.example'`,
      [ws.workspaceId],
    );

    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    /** Live heap: what is still referenced after a full collection (garbage of finished batches is not). */
    const liveHeap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const baseline = liveHeap();
    let peak = baseline;
    let bytes = 0;
    let lines = 0;
    let chunks = 0;
    const started = Date.now();
    // A connection of its own: the bulk insert above blocked this process (PGlite runs in it) long enough
    // for a pooled keep-alive connection to be closed by the server just as it is reused.
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      http
        .get(`${t.url}/v2/list/export?listId=${listId}`, { agent: false, headers: { 'X-API-Key': ws.apiKey } }, resolve)
        .on('error', reject),
    );
    expect(res.statusCode).toBe(200);
    for await (const chunk of res as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
      // Sampled while the export is in flight (the server holds its current batch and buffers).
      if (++chunks % 100 === 0) peak = Math.max(peak, liveHeap());
    }
    const growthMb = (peak - baseline) / 2 ** 20;
    console.log(
      `export of ${size} members: ${(bytes / 2 ** 20).toFixed(1)} MB in ${Date.now() - started} ms (${chunks} chunks), peak live heap growth ${growthMb.toFixed(1)} MB`,
    );
    expect(lines).toBe(size + 1);
    expect(bytes).toBeGreaterThan(15 * 2 ** 20);
    // Buffering the export would hold every row (objects and text, well over 100 MB) at once.
    expect(growthMb).toBeLessThan(32);
  }, 300_000);
});
