/**
 * Pages of list members by `skip` start at the counted block that holds them (list_member_blocks): after adds
 * and removes that cut blocks, empty them and add before their first keys, every page by skip is the page the
 * plain offset over the member rows gives, and every block's count is the number of members in its range.
 */
import { expect } from '@jest/globals';
import type { RawResult } from '../../server/db';
import { generateLeads } from '../../server/modules/leads/generate';
import { BLOCK_SIZE } from '../../server/modules/list/store';
import { found } from '../helpers/rows';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

type Kind = 'people' | 'company';
const MEMBERS = {
  people: { table: 'list_people', column: 'person_id' },
  company: { table: 'list_companies', column: 'company_id' },
} as const;
const LIMIT = 100;

let t: TestServer;
let ws: TestWorkspace;
let personIds: string[];
let companyIds: string[];
beforeAll(async () => {
  t = await startTestServer();
  await generateLeads(t.db, { people: 3 * BLOCK_SIZE + 500, companies: 2 * BLOCK_SIZE + 600, now: t.clock.now() });
  personIds = (await t.db('people').orderBy('id').select('id')).map((r: { id: string }) => r.id);
  companyIds = (await t.db('companies').orderBy('id').select('id')).map((r: { id: string }) => r.id);
  ws = await t.createWorkspace();
}, 120_000);
afterAll(() => t.close());

let names = 0;
async function createList(kind: Kind) {
  const { data } = await ws.client.POST(kind === 'people' ? '/v2/list/create/people' : '/v2/list/create/company', {
    body: { name: `List ${++names}` },
  });
  return data!.data.list.id;
}

/** Adds or removes members through the API, at most 1,000 ids a request; returns the member counts it answered. */
async function change(kind: Kind, action: 'add' | 'remove', listId: string, ids: string[]): Promise<number> {
  let memberCount = 0;
  for (let i = 0; i < ids.length; i += 1000) {
    const batch = ids.slice(i, i + 1000);
    const { data, response } =
      kind === 'people'
        ? await ws.client.POST(action === 'add' ? '/v2/list/add/leads' : '/v2/list/remove/leads', {
            body: { listId, personIds: batch },
          })
        : await ws.client.POST(action === 'add' ? '/v2/list/add/companies' : '/v2/list/remove/companies', {
            body: { listId, companyIds: batch },
          });
    expect(response.status).toBe(200);
    memberCount = data!.data.list.memberCount;
  }
  return memberCount;
}

/** The list's member ids in list order, by the plain offset over its rows. */
async function byOffset(kind: Kind, listId: string, skip: number): Promise<string[]> {
  const { table, column } = MEMBERS[kind];
  const rows: Record<string, string>[] = await t
    .db(table)
    .where({ list_id: listId })
    .orderBy([{ column: 'added_at' }, { column }])
    .offset(skip)
    .limit(LIMIT)
    .select(column);
  return rows.map((r) => r[column]);
}

async function bySkip(kind: Kind, listId: string, skip: number): Promise<string[]> {
  const query = { listId, limit: LIMIT, skip };
  const { data, response } =
    kind === 'people'
      ? await ws.client.GET('/v2/list/leads', { params: { query } })
      : await ws.client.GET('/v2/list/companies', { params: { query } });
  expect(response.status).toBe(200);
  return data!.data.items.map((m) => m.id);
}

/**
 * Every page by skip (each LIMIT-th offset, and the offsets around each block's start and the list's end) is
 * the plain offset's page.
 */
async function expectPagesByOffset(kind: Kind, listId: string): Promise<void> {
  const { table } = MEMBERS[kind];
  const count = Number((await t.db(table).where({ list_id: listId }).count<{ n: string }[]>({ n: '*' }))[0].n);
  const starts = (await blocks(listId)).map((b) => Number(b.before));
  const skips = new Set<number>();
  for (let s = 1; s <= count + LIMIT; s += LIMIT) skips.add(s);
  for (const s of [...starts, count]) for (const d of [-1, 0, 1]) if (s + d > 0) skips.add(s + d);
  for (const skip of [...skips].sort((a, b) => a - b)) {
    expect({ skip, ids: await bySkip(kind, listId, skip) }).toEqual({ skip, ids: await byOffset(kind, listId, skip) });
  }
}

interface Block {
  first_added_at: Date | number;
  first_member_id: string;
  member_count: number;
  /** Members of the blocks before it. */
  before: string;
  /** Members in its range, counted from the rows. */
  counted: string;
}

/** The list's blocks in order, each with the members its range holds, counted. */
async function blocks(listId: string): Promise<Block[]> {
  const { kind } = await found(t.db('lists').where({ id: listId }).first<{ kind: Kind } | undefined>('kind'), 'list');
  const { table, column } = MEMBERS[kind];
  return (
    await t.db.raw<RawResult<Block>>(
      `SELECT b.first_added_at, b.first_member_id, b.member_count,
              sum(b.member_count) OVER (ORDER BY b.first_added_at, b.first_member_id) - b.member_count AS before,
              (SELECT count(*) FROM ?? m WHERE m.list_id = b.list_id AND (m.added_at, m.??) >= (b.first_added_at, b.first_member_id)
                  AND NOT EXISTS (SELECT 1 FROM list_member_blocks n WHERE n.list_id = b.list_id
                                    AND (n.first_added_at, n.first_member_id) > (b.first_added_at, b.first_member_id)
                                    AND (m.added_at, m.??) >= (n.first_added_at, n.first_member_id))) AS counted
         FROM list_member_blocks b WHERE b.list_id = ? ORDER BY b.first_added_at, b.first_member_id`,
      [table, column, column, listId],
    )
  ).rows;
}

/** Each block counts the members of its range, none is empty, none holds more than twice BLOCK_SIZE, the first starts before every member. */
async function expectBlocksCounted(listId: string, sizes?: number[]): Promise<void> {
  const found = await blocks(listId);
  for (const b of found)
    expect({ key: [b.first_added_at, b.first_member_id], count: b.member_count }).toEqual({
      key: [b.first_added_at, b.first_member_id],
      count: Number(b.counted),
    });
  for (const b of found) expect(b.member_count).toBeGreaterThan(0);
  for (const b of found) expect(b.member_count).toBeLessThanOrEqual(2 * BLOCK_SIZE);
  if (found.length) expect(found[0].first_added_at).toBe(-Infinity);
  if (sizes) expect(found.map((b) => b.member_count)).toEqual(sizes);
}

it('pages a people list by skip exactly as the offset does, through block cuts, empty blocks and adds before the first keys', async () => {
  const listId = await createList('people');
  const [early, late] = [personIds.slice(0, 1700), personIds.slice(1700)];
  // Two batches at one time: the second's ids fall between the first's (members of one time are in id order).
  t.clock.set('2026-11-24T10:00:00Z');
  expect(
    await change(
      'people',
      'add',
      listId,
      late.filter((_, i) => i % 2 === 0),
    ),
  ).toBe(900);
  expect(
    await change(
      'people',
      'add',
      listId,
      late.filter((_, i) => i % 2 === 1),
    ),
  ).toBe(1800);
  await expectBlocksCounted(listId, [1800]);
  t.clock.advance(60_000);
  expect(await change('people', 'add', listId, early.slice(0, 1000))).toBe(2800);
  // The first block passed twice BLOCK_SIZE with the 1,000 (a request adds at most 1,000): cut in blocks of BLOCK_SIZE.
  await expectBlocksCounted(listId, [1000, 1000, 800]);
  await expectPagesByOffset('people', listId);

  // Members before every block's first key (an earlier time): counted in the first block.
  t.clock.set('2026-11-24T09:00:00Z');
  expect(await change('people', 'add', listId, early.slice(1000))).toBe(3500);
  await expectBlocksCounted(listId, [1700, 1000, 800]);
  await expectPagesByOffset('people', listId);

  // Removed: every third member, then the whole second block's range and the first block's first keys.
  const order = (
    await t
      .db('list_people')
      .where({ list_id: listId })
      .orderBy([{ column: 'added_at' }, { column: 'person_id' }])
      .select('person_id')
  ).map((r: { person_id: string }) => r.person_id);
  await change(
    'people',
    'remove',
    listId,
    order.filter((_, i) => i % 3 === 0),
  );
  await expectBlocksCounted(listId);
  await expectPagesByOffset('people', listId);
  const [, second] = await blocks(listId);
  const secondIds = (
    await t
      .db('list_people')
      .where({ list_id: listId })
      .whereRaw('(added_at, person_id) >= (?, ?)', [second.first_added_at, second.first_member_id])
      .orderBy([{ column: 'added_at' }, { column: 'person_id' }])
      .limit(second.member_count)
      .select('person_id')
  ).map((r: { person_id: string }) => r.person_id);
  await change('people', 'remove', listId, secondIds);
  await expectBlocksCounted(listId);
  expect(await blocks(listId)).toHaveLength(2); // the emptied block is gone
  await expectPagesByOffset('people', listId);

  // Everything removed: no blocks, and a page past the end is empty; an add starts the first block again.
  expect(await change('people', 'remove', listId, personIds)).toBe(0);
  expect(await blocks(listId)).toEqual([]);
  expect(await bySkip('people', listId, 5)).toEqual([]);
  t.clock.advance(60_000);
  expect(await change('people', 'add', listId, personIds.slice(0, 300))).toBe(300);
  await expectBlocksCounted(listId, [300]);
  await expectPagesByOffset('people', listId);
}, 300_000);

it('pages a company list by skip exactly as the offset does', async () => {
  const listId = await createList('company');
  expect(
    await change(
      'company',
      'add',
      listId,
      companyIds.filter((_, i) => i % 2 === 1),
    ),
  ).toBe(1300);
  t.clock.advance(1000);
  expect(
    await change(
      'company',
      'add',
      listId,
      companyIds.filter((_, i) => i % 2 === 0),
    ),
  ).toBe(2600);
  await expectBlocksCounted(listId, [1000, 1000, 600]);
  await expectPagesByOffset('company', listId);
  await change('company', 'remove', listId, companyIds.slice(0, 1000));
  await expectBlocksCounted(listId);
  await expectPagesByOffset('company', listId);
  expect(await bySkip('company', listId, 5000)).toEqual([]);
}, 300_000);

it('pages an empty list and past the end', async () => {
  const listId = await createList('people');
  expect(await bySkip('people', listId, 1)).toEqual([]);
  await change('people', 'add', listId, personIds.slice(0, 3));
  expect(await bySkip('people', listId, 2)).toEqual(await byOffset('people', listId, 2));
  expect(await bySkip('people', listId, 3)).toEqual([]);
});

it('keeps the blocks counted under a concurrent add and remove, and deletes them with the list', async () => {
  const listId = await createList('people');
  await change('people', 'add', listId, personIds.slice(0, 1900));
  t.clock.advance(1000);
  // The adds cut the first block while the removes uncount it: the list's lock puts one after the other.
  await Promise.all([
    change('people', 'add', listId, personIds.slice(1900, 2900)),
    change(
      'people',
      'remove',
      listId,
      personIds.slice(0, 1000).filter((_, i) => i % 2 === 0),
    ),
  ]);
  const { data } = await ws.client.GET('/v2/list/get', { params: { query: { listId } } });
  expect(data!.data.list.memberCount).toBe(2400);
  await expectBlocksCounted(listId);
  expect((await blocks(listId)).reduce((n, b) => n + b.member_count, 0)).toBe(2400);
  await expectPagesByOffset('people', listId);

  await ws.client.POST('/v2/list/delete/people', { body: { listId } });
  expect(await t.db('list_member_blocks').where({ list_id: listId })).toEqual([]);
}, 300_000);
