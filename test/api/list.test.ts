import { expect } from '@jest/globals';
import type { RawResult } from '../../server/db';
import { readJson, type ErrorBody } from '../helpers/bodies';
import { statementsDuring } from '../helpers/statements';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { amy, bakery, bob, brightpath, carla, insertFixtures, jane, luis, northwind } from './people-search-fixtures';

let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
  ws = await t.createWorkspace({ name: 'Acme Outbound' });
});
afterAll(() => t.close());

const UNKNOWN = '0192f0c5-0000-7000-8000-000000000000';
let names = 0;
const uniqueName = () => `List ${++names}`;

async function call(w: TestWorkspace, method: string, path: string, body?: unknown) {
  const res = await t.fetch(path, {
    method,
    apiKey: w.apiKey,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status < 400) return { status: res.status, body: await readJson<unknown>(res), fields: [] };
  // Lists are /v2 only: an error answers the /v2 error body.
  const json = await readJson<ErrorBody>(res);
  expect(json.requestId).toBe(res.headers.get('x-request-id'));
  return { status: res.status, body: json, fields: json.details.map((d) => d.field) };
}

async function createList(w: TestWorkspace, kind: 'people' | 'company', name = uniqueName()) {
  const { data, response } = await w.client.POST(
    kind === 'people' ? '/v2/list/create/people' : '/v2/list/create/company',
    { body: { name } },
  );
  expect(response.status).toBe(201);
  return data!.data.list;
}

async function addPeople(w: TestWorkspace, listId: string, personIds: string[]) {
  const { data, response } = await w.client.POST('/v2/list/add/leads', { body: { listId, personIds } });
  expect(response.status).toBe(200);
  return data!.data;
}

describe('create', () => {
  it('creates empty people and company lists', async () => {
    const { data, response } = await ws.client.POST('/v2/list/create/people', {
      body: { name: '  Austin SaaS VPs  ' },
    });
    expect(response.status).toBe(201);
    expect(data).toEqual({
      status: 'success',
      success: true,
      message: 'List created',
      data: {
        list: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          name: 'Austin SaaS VPs',
          kind: 'people',
          memberCount: 0,
          createdAt: '2026-11-23T10:00:00.000Z',
          updatedAt: '2026-11-23T10:00:00.000Z',
        },
      },
    });
    const company = await createList(ws, 'company', 'Austin SaaS VPs');
    expect(company).toMatchObject({ kind: 'company', name: 'Austin SaaS VPs', memberCount: 0 });
  });

  it('answers 409 for a name already used by a list of the same kind, ignoring case and spaces', async () => {
    const name = uniqueName();
    await createList(ws, 'people', name);
    const res = await call(ws, 'POST', '/v2/list/create/people', { name: ` ${name.toUpperCase()} ` });
    expect(res).toMatchObject({
      status: 409,
      body: { error: `A people list named "${name.toUpperCase()}" already exists.`, code: 'conflict' },
      fields: ['body.name'],
    });
    // Another workspace may use the name.
    const other = await t.createWorkspace();
    await createList(other, 'people', name);
  });

  it('validates the body', async () => {
    for (const [body, field] of [
      [{ name: '' }, 'body.name'],
      [{ name: 'x'.repeat(201) }, 'body.name'],
      [{}, 'body.name'],
      [{ name: 'ok', kind: 'people' }, 'body.kind'],
    ] as const) {
      const res = await call(ws, 'POST', '/v2/list/create/company', body);
      expect(res).toMatchObject({ status: 400, body: { code: 'validation_error' }, fields: [field] });
    }
  });

  it('is not served under /v1', async () => {
    const res = await t.fetch('/v1/list/create/people', {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'content-type': 'application/json' },
      body: '{"name":"x"}',
    });
    expect(res.status).toBe(404);
  });
});

describe('get and all', () => {
  it('gets a list with its member count; another workspace gets 404', async () => {
    const list = await createList(ws, 'people');
    await addPeople(ws, list.id, [jane.id, luis.id]);
    const { data } = await ws.client.GET('/v2/list/get', { params: { query: { listId: list.id } } });
    expect(data!.data.list).toEqual({ ...list, memberCount: 2 });
    const other = await t.createWorkspace();
    for (const listId of [list.id, UNKNOWN]) {
      const res = await call(other, 'GET', `/v2/list/get?listId=${listId}`);
      expect(res).toMatchObject({ status: 404, body: { error: 'List not found.', code: 'not_found' } });
    }
    expect(await call(ws, 'GET', '/v2/list/get?listId=abc')).toMatchObject({ status: 400, fields: ['query.listId'] });
  });

  it('pages the workspace lists newest first, with a kind filter', async () => {
    const w = await t.createWorkspace();
    const made = [];
    for (const kind of ['people', 'company', 'people'] as const) {
      made.push(await createList(w, kind));
      t.clock.advance(1000);
    }
    await addPeople(w, made[2].id, [amy.id]);
    const all = await w.client.GET('/v2/list/all', { params: { query: { limit: 2 } } });
    expect(all.data!.data).toEqual({
      items: [{ ...made[2], memberCount: 1, updatedAt: all.data!.data.items[0].updatedAt }, made[1]],
      pagination: { limit: 2, skip: 0, total: 3, hasMore: true },
    });
    const rest = await w.client.GET('/v2/list/all', { params: { query: { limit: 2, skip: 2 } } });
    expect(rest.data!.data).toEqual({ items: [made[0]], pagination: { limit: 2, skip: 2, total: 3, hasMore: false } });
    const past = await w.client.GET('/v2/list/all', { params: { query: { limit: 2, skip: 4 } } });
    expect(past.data!.data).toEqual({ items: [], pagination: { limit: 2, skip: 4, total: 3, hasMore: false } });
    const companies = await w.client.GET('/v2/list/all', { params: { query: { kind: 'company' } } });
    expect(companies.data!.data).toEqual({
      items: [made[1]],
      pagination: { limit: 20, skip: 0, total: 1, hasMore: false },
    });
    expect(await call(w, 'GET', '/v2/list/all?kind=robots')).toMatchObject({ status: 400, fields: ['query.kind'] });
    expect(await call(w, 'GET', '/v2/list/all?limit=101')).toMatchObject({ status: 400, fields: ['query.limit'] });
  });
});

describe('add and remove members', () => {
  it('adds people, counts repeats once, reports unknown ids, and keeps the lead database untouched', async () => {
    const list = await createList(ws, 'people');
    t.clock.advance(60_000);
    const first = await addPeople(ws, list.id, [jane.id, luis.id, UNKNOWN, jane.id]);
    expect(first).toEqual({
      list: { ...list, memberCount: 2, updatedAt: t.clock.now().toISOString() },
      added: 2,
      alreadyInList: 0,
      notFound: [UNKNOWN],
    });
    const second = await addPeople(ws, list.id, [luis.id, amy.id, bakery.id]);
    expect(second).toMatchObject({ added: 1, alreadyInList: 1, notFound: [bakery.id], list: { memberCount: 3 } });
    const again = await addPeople(ws, list.id, [jane.id]);
    expect(again).toMatchObject({ added: 0, alreadyInList: 1, notFound: [], list: { memberCount: 3 } });

    const removed = await ws.client.POST('/v2/list/remove/leads', {
      body: { listId: list.id, personIds: [jane.id, bob.id, UNKNOWN, jane.id] },
    });
    expect(removed.data!.data).toMatchObject({ removed: 1, notInList: [bob.id, UNKNOWN], list: { memberCount: 2 } });
    expect(Number((await t.db('people').whereIn('id', [jane.id, bob.id]).count('* as n'))[0].n)).toBe(2);
  });

  it('adds and removes companies', async () => {
    const list = await createList(ws, 'company');
    const added = await ws.client.POST('/v2/list/add/companies', {
      body: { listId: list.id, companyIds: [northwind.id, brightpath.id, jane.id] },
    });
    expect(added.data!.data).toMatchObject({
      added: 2,
      alreadyInList: 0,
      notFound: [jane.id],
      list: { memberCount: 2, kind: 'company' },
    });
    const removed = await ws.client.POST('/v2/list/remove/companies', {
      body: { listId: list.id, companyIds: [northwind.id] },
    });
    expect(removed.data!.data).toMatchObject({ removed: 1, notInList: [], list: { memberCount: 1 } });
  });

  it('answers 409 for the other kind and 404 for another workspace list, changing nothing', async () => {
    const people = await createList(ws, 'people');
    const companies = await createList(ws, 'company');
    expect(
      await call(ws, 'POST', '/v2/list/add/companies', { listId: people.id, companyIds: [northwind.id] }),
    ).toMatchObject({
      status: 409,
      body: { error: 'This list is a people list: use POST /v2/list/add/leads.', code: 'conflict' },
      fields: ['body.listId'],
    });
    expect(
      await call(ws, 'POST', '/v2/list/remove/leads', { listId: companies.id, personIds: [jane.id] }),
    ).toMatchObject({
      status: 409,
      body: { error: 'This list is a company list: use POST /v2/list/remove/companies.' },
    });
    const other = await t.createWorkspace();
    expect(await call(other, 'POST', '/v2/list/add/leads', { listId: people.id, personIds: [jane.id] })).toMatchObject({
      status: 404,
      body: { error: 'List not found.' },
    });
    expect(Number((await t.db('list_people').where({ list_id: people.id }).count('* as n'))[0].n)).toBe(0);
    expect(Number((await t.db('list_companies').where({ list_id: people.id }).count('* as n'))[0].n)).toBe(0);
  });

  it('takes 1 to 1000 UUIDs', async () => {
    const list = await createList(ws, 'people');
    const many = Array.from({ length: 1001 }, (_, i) => `0192f0c5-0000-7000-8000-${String(i).padStart(12, '0')}`);
    expect(await call(ws, 'POST', '/v2/list/add/leads', { listId: list.id, personIds: many })).toMatchObject({
      status: 400,
      fields: ['body.personIds'],
    });
    expect(await call(ws, 'POST', '/v2/list/add/leads', { listId: list.id, personIds: [] })).toMatchObject({
      status: 400,
      fields: ['body.personIds'],
    });
    expect(await call(ws, 'POST', '/v2/list/add/leads', { listId: list.id, personIds: ['nope'] })).toMatchObject({
      status: 400,
      fields: ['body.personIds.0'],
    });
    const full = await addPeople(ws, list.id, many.slice(0, 1000));
    expect(full).toMatchObject({ added: 0, notFound: many.slice(0, 1000) });
  });
});

describe('read members', () => {
  it('shows people in the order added, with only what this workspace revealed', async () => {
    const list = await createList(ws, 'people');
    const luisAddedAt = t.clock.now().toISOString();
    await addPeople(ws, list.id, [luis.id]);
    t.clock.advance(1000);
    await addPeople(ws, list.id, [jane.id, carla.id]);
    // Jane: email and full contact revealed to this workspace; Luis: revealed to another workspace only.
    const other = await t.createWorkspace();
    await t.db('people_reveals').insert([
      { workspace_id: ws.workspaceId, person_id: jane.id, data_option: 'workEmailReveal', revealed_at: t.clock.now() },
      {
        workspace_id: ws.workspaceId,
        person_id: jane.id,
        data_option: 'fullContactAndCompany',
        revealed_at: t.clock.now(),
      },
      {
        workspace_id: other.workspaceId,
        person_id: luis.id,
        data_option: 'workEmailReveal',
        revealed_at: t.clock.now(),
      },
    ]);
    const { data } = await ws.client.GET('/v2/list/leads', { params: { query: { listId: list.id, limit: 2 } } });
    const [first, second] = data!.data.items;
    expect(first).toEqual({
      id: luis.id,
      firstName: 'Luis',
      lastName: 'Ortega',
      name: 'Luis Ortega',
      title: 'Regional Sales Director',
      seniority: 'director',
      department: 'sales',
      city: 'Houston',
      state: 'Texas',
      country: 'United States',
      emailStatus: 'likely',
      hasEmail: true,
      hasMobilePhone: false,
      company: {
        id: brightpath.id,
        name: 'Brightpath Logistics',
        domain: 'brightpathlogistics.com',
        websiteUrl: 'https://brightpathlogistics.com',
        industry: 'Logistics and Supply Chain',
        city: 'Houston',
        state: 'Texas',
        country: 'United States',
      },
      revealed: [],
      creditsCharged: 0,
      addedAt: luisAddedAt,
    });
    expect(second).toMatchObject({
      id: jane.id,
      email: 'jane.doe@northwindanalytics.com',
      linkedinUrl: 'https://www.linkedin.com/in/jane-doe',
      revealed: ['workEmailReveal', 'fullContactAndCompany'],
    });
    expect(second.company).toMatchObject({ employeeCount: 180, technologies: ['salesforce', 'aws'] });
    expect(second).not.toHaveProperty('mobilePhone');
    expect(data!.data.pagination).toEqual({
      limit: 2,
      skip: 0,
      total: 3,
      hasMore: true,
      nextCursor: expect.any(String),
    });
    const next = await ws.client.GET('/v2/list/leads', { params: { query: { listId: list.id, limit: 2, skip: 2 } } });
    expect(next.data!.data.items.map((p) => p.id)).toEqual([carla.id]);
    expect(next.data!.data.pagination).toEqual({ limit: 2, skip: 2, total: 3, hasMore: false, nextCursor: null });
    const past = await ws.client.GET('/v2/list/leads', { params: { query: { listId: list.id, limit: 2, skip: 5 } } });
    expect(past.data!.data).toEqual({
      items: [],
      pagination: { limit: 2, skip: 5, total: 3, hasMore: false, nextCursor: null },
    });
    // The first page's cursor leads to the same next page as the skip.
    const byCursor = await ws.client.GET('/v2/list/leads', {
      params: { query: { listId: list.id, limit: 2, cursor: data!.data.pagination.nextCursor! } },
    });
    expect(byCursor.data!.data).toEqual({ ...next.data!.data, pagination: { ...next.data!.data.pagination, skip: 0 } });
    // Reading charges nothing.
    expect(Number((await t.db('credit_ledger').where({ workspace_id: ws.workspaceId }).count('* as n'))[0].n)).toBe(1);
  });

  it('shows companies in full only when this workspace saw them in full', async () => {
    const list = await createList(ws, 'company');
    await ws.client.POST('/v2/list/add/companies', {
      body: { listId: list.id, companyIds: [northwind.id, bakery.id] },
    });
    await t
      .db('company_reveals')
      .insert({ workspace_id: ws.workspaceId, company_id: northwind.id, revealed_at: t.clock.now() });
    const { data } = await ws.client.GET('/v2/list/companies', { params: { query: { listId: list.id } } });
    const byId = new Map(data!.data.items.map((c) => [c.id, c]));
    expect(byId.get(northwind.id)).toMatchObject({
      revealed: true,
      employeeCount: 180,
      employeeRange: '51-200',
      phone: '+1 512 555 0148',
    });
    expect(byId.get(bakery.id)).toEqual({
      id: bakery.id,
      name: 'Tiny Bakery',
      domain: 'tinybakery.co',
      websiteUrl: null,
      industry: 'Food & Beverages',
      city: 'London',
      state: 'England',
      country: 'United Kingdom',
      revealed: false,
      addedAt: t.clock.now().toISOString(),
    });
  });

  it('reads a page of members with their people or companies in one statement', async () => {
    const people = await createList(ws, 'people');
    await addPeople(ws, people.id, [jane.id, luis.id, carla.id]);
    const companies = await createList(ws, 'company');
    await ws.client.POST('/v2/list/add/companies', {
      body: { listId: companies.id, companyIds: [northwind.id, bakery.id] },
    });
    const reads = (statements: string[]) =>
      statements.filter((sql) => /"lists"|"list_people"|"list_companies"|"people"|"companies"|_reveals/.test(sql));
    const leads = await statementsDuring(t.db, () =>
      ws.client.GET('/v2/list/leads', { params: { query: { listId: people.id } } }),
    );
    expect(leads.result.data!.data.items).toHaveLength(3);
    expect(reads(leads.statements)).toHaveLength(1);
    const members = await statementsDuring(t.db, () =>
      ws.client.GET('/v2/list/companies', { params: { query: { listId: companies.id } } }),
    );
    expect(members.result.data!.data.items).toHaveLength(2);
    expect(reads(members.statements)).toHaveLength(1);
  });

  it('pages by cursor in list order, never repeating or skipping a member while the list changes', async () => {
    const list = await createList(ws, 'people');
    // Added at three times; Jane, Amy and Bob at one time, so their order is by id.
    await addPeople(ws, list.id, [luis.id]);
    t.clock.advance(1000);
    await addPeople(ws, list.id, [jane.id, amy.id, bob.id]);
    t.clock.advance(1000);
    await addPeople(ws, list.id, [carla.id]);
    const order = [luis.id, ...[jane.id, amy.id, bob.id].sort(), carla.id];
    const page = async (cursor?: string) => {
      const { data, response } = await ws.client.GET('/v2/list/leads', {
        params: { query: { listId: list.id, limit: 2, cursor } },
      });
      expect(response.status).toBe(200);
      return data!.data;
    };
    const first = await page();
    expect(first.items.map((p) => p.id)).toEqual(order.slice(0, 2));
    // A member the client has passed leaves, and one joins: the next pages neither shift nor repeat.
    t.clock.advance(1000);
    await ws.client.POST('/v2/list/remove/leads', { body: { listId: list.id, personIds: [order[0]] } });
    await t.db('people').insert({
      ...luis,
      id: '0192f0c5-00aa-7000-8000-0000000000aa',
      first_name: 'Late',
      work_email: 'late@brightpathlogistics.com',
    });
    await addPeople(ws, list.id, ['0192f0c5-00aa-7000-8000-0000000000aa']);
    const second = await page(first.pagination.nextCursor!);
    expect(second.items.map((p) => p.id)).toEqual(order.slice(2, 4));
    expect(second.pagination).toEqual({ limit: 2, skip: 0, total: 5, hasMore: true, nextCursor: expect.any(String) });
    const third = await page(second.pagination.nextCursor!);
    expect(third.items.map((p) => p.id)).toEqual([carla.id, '0192f0c5-00aa-7000-8000-0000000000aa']);
    expect(third.pagination).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it('answers 400 for a cursor it did not give, and for a cursor with skip', async () => {
    const list = await createList(ws, 'company');
    const cursor = Buffer.from(`2026-11-23T10:05:00.000Z|${northwind.id}`).toString('base64url');
    expect((await call(ws, 'GET', `/v2/list/companies?listId=${list.id}&cursor=${cursor}`)).status).toBe(200);
    for (const bad of [
      'nope',
      Buffer.from('2026-11-23|x').toString('base64url'),
      Buffer.from(`+275760-09-13T00:00:00.000Z|${northwind.id}`).toString('base64url'),
    ]) {
      expect(await call(ws, 'GET', `/v2/list/companies?listId=${list.id}&cursor=${bad}`)).toMatchObject({
        status: 400,
        body: { error: 'The cursor is not one this API gave.' },
        fields: ['query.cursor'],
      });
    }
    expect(await call(ws, 'GET', `/v2/list/companies?listId=${list.id}&cursor=${cursor}&skip=20`)).toMatchObject({
      status: 400,
      fields: ['query.skip'],
    });
  });

  it('answers 409 for the other kind and 404 for another workspace', async () => {
    const people = await createList(ws, 'people');
    const companies = await createList(ws, 'company');
    expect(await call(ws, 'GET', `/v2/list/companies?listId=${people.id}`)).toMatchObject({
      status: 409,
      body: { error: 'This list is a people list: use GET /v2/list/leads.' },
      fields: ['query.listId'],
    });
    expect(await call(ws, 'GET', `/v2/list/leads?listId=${companies.id}`)).toMatchObject({
      status: 409,
      body: { error: 'This list is a company list: use GET /v2/list/companies.' },
    });
    const other = await t.createWorkspace();
    expect(await call(other, 'GET', `/v2/list/leads?listId=${people.id}`)).toMatchObject({ status: 404 });
  });
});

describe('delete', () => {
  it('deletes the list and its memberships; the people stay', async () => {
    const list = await createList(ws, 'people');
    await addPeople(ws, list.id, [jane.id, amy.id]);
    const keep = await createList(ws, 'people');
    await addPeople(ws, keep.id, [jane.id]);
    const { data } = await ws.client.POST('/v2/list/delete/people', { body: { listId: list.id } });
    expect(data).toMatchObject({
      message: 'List deleted',
      data: { list: { id: list.id, memberCount: 2 }, membersRemoved: 2 },
    });
    expect((await call(ws, 'GET', `/v2/list/get?listId=${list.id}`)).status).toBe(404);
    expect(Number((await t.db('list_people').where({ list_id: list.id }).count('* as n'))[0].n)).toBe(0);
    expect(Number((await t.db('list_people').where({ list_id: keep.id }).count('* as n'))[0].n)).toBe(1);
    expect(Number((await t.db('people').whereIn('id', [jane.id, amy.id]).count('* as n'))[0].n)).toBe(2);
    // The name is free again.
    await createList(ws, 'people', list.name);
  });

  it('answers 409 for the other kind and 404 for another workspace, deleting nothing', async () => {
    const companies = await createList(ws, 'company');
    expect(await call(ws, 'POST', '/v2/list/delete/people', { listId: companies.id })).toMatchObject({
      status: 409,
      body: { error: 'This list is a company list: use POST /v2/list/delete/company.' },
    });
    const other = await t.createWorkspace();
    expect(await call(other, 'POST', '/v2/list/delete/company', { listId: companies.id })).toMatchObject({
      status: 404,
      body: { error: 'List not found.' },
    });
    expect((await call(ws, 'GET', `/v2/list/get?listId=${companies.id}`)).status).toBe(200);
  });
});

describe('member count', () => {
  const counted = async () =>
    Object.fromEntries(
      (
        await t.db.raw<RawResult<{ id: string; kept: number; counted: string }>>(`SELECT l.id, l.member_count AS kept,
          (SELECT count(*) FROM list_people m WHERE m.list_id = l.id) + (SELECT count(*) FROM list_companies m WHERE m.list_id = l.id) AS counted
          FROM lists l`)
      ).rows.map((r): [string, [number, number]] => [r.id, [r.kept, Number(r.counted)]]),
    );

  it('is kept by every add and remove, and the migration counts the members of lists that existed before it', async () => {
    const kept = await counted();
    expect(Object.keys(kept).length).toBeGreaterThan(10);
    for (const [kept_, real] of Object.values(kept)) expect(kept_).toBe(real);

    const list = await createList(ws, 'people');
    await addPeople(ws, list.id, [jane.id, amy.id]);
    const migration = '20261127030000_list_member_count';
    await t.db.migrate.down({ name: migration });
    // Memberships from before the counter existed.
    await t.db('list_people').insert({ list_id: list.id, person_id: bob.id, added_at: t.clock.now() });
    await t.db.migrate.up({ name: migration });
    const after = await counted();
    expect(after[list.id]).toEqual([3, 3]);
    expect(Object.values(after).map(([k]) => k)).toEqual(Object.values(after).map(([, c]) => c));
    expect(
      (await ws.client.GET('/v2/list/get', { params: { query: { listId: list.id } } })).data!.data.list.memberCount,
    ).toBe(3);
  });
});
