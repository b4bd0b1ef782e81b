/**
 * Migration 20261203010000 cuts the member order of every list that existed before it into counted blocks of
 * 1,000 (list_member_blocks): a database at the migration before, lists and members written as the code before
 * it left them, then the latest schema, the blocks and pages by skip through HTTP; `down` drops the table.
 */
import { expect, it, afterAll } from '@jest/globals';
import { newId } from '../../server/platform/ids';
import { generateLeads } from '../../server/modules/leads/generate';
import { oldWorkspace } from '../helpers/old-workspace';
import { databaseBefore, startTestServer, type TestServer } from '../helpers/server';

const BLOCKS = '20261203010000_create_list_member_blocks';
const NIL = '00000000-0000-0000-0000-000000000000';

let t: TestServer;
afterAll(() => t?.close());

it('cuts the members of every list stored before it into counted blocks', async () => {
  const database = await databaseBefore(BLOCKS);
  const { db } = database;
  expect(await db.schema.hasTable('list_member_blocks')).toBe(false);

  const { workspaceId } = await oldWorkspace(db);
  await generateLeads(db, { people: 2500, companies: 1200 });
  const people = (await db('people').orderBy('id').select('id')).map((r: { id: string }) => r.id);
  const companies = (await db('companies').orderBy('id').select('id')).map((r: { id: string }) => r.id);
  const at = new Date('2026-11-20T10:00:00Z');
  const later = new Date('2026-11-20T11:00:00Z');
  const list = (kind: string, name: string, members: number) => ({
    id: newId(),
    workspace_id: workspaceId,
    kind,
    name,
    member_count: members,
    created_at: at,
    updated_at: at,
  });
  const [big, empty, firms] = [list('people', 'Big', 2500), list('people', 'Empty', 0), list('company', 'Firms', 1200)];
  await db('lists').insert([big, empty, firms]);
  // The odd people first, the even ones an hour later: list order is by time, then id.
  for (const [i, batch] of [people.filter((_, k) => k % 2 === 1), people.filter((_, k) => k % 2 === 0)].entries()) {
    await db.batchInsert(
      'list_people',
      batch.map((id) => ({ list_id: big.id, person_id: id, added_at: i ? later : at })),
      1000,
    );
  }
  await db.batchInsert(
    'list_companies',
    companies.map((id) => ({ list_id: firms.id, company_id: id, added_at: at })),
    1000,
  );

  t = await startTestServer({ database });
  const blocks = async (listId: string) =>
    (
      await t
        .db('list_member_blocks')
        .where({ list_id: listId })
        .orderBy([{ column: 'first_added_at' }, { column: 'first_member_id' }])
        .select('first_added_at', 'first_member_id', 'member_count')
    ).map((b: { first_added_at: Date | number; first_member_id: string; member_count: number }) => [
      b.first_added_at,
      b.first_member_id,
      b.member_count,
    ]);
  const odd = people.filter((_, k) => k % 2 === 1);
  const even = people.filter((_, k) => k % 2 === 0);
  const cut = {
    big: [
      [-Infinity, NIL, 1000],
      [at, odd[1000], 1000],
      [later, even[750], 500],
    ],
    firms: [
      [-Infinity, NIL, 1000],
      [at, companies[1000], 200],
    ],
  };
  expect(await blocks(big.id)).toEqual(cut.big);
  expect(await blocks(empty.id)).toEqual([]);
  expect(await blocks(firms.id)).toEqual(cut.firms);

  const client = t.client((await t.services.workspaces.createKey(workspaceId)).apiKey);
  const order = [...odd, ...even];
  for (const skip of [999, 1000, 1001, 2450, 2500]) {
    const { data } = await client.GET('/v2/list/leads', { params: { query: { listId: big.id, limit: 100, skip } } });
    expect(data!.data.items.map((p) => p.id)).toEqual(order.slice(skip, skip + 100));
  }
  const { data } = await client.GET('/v2/list/companies', {
    params: { query: { listId: firms.id, limit: 100, skip: 1150 } },
  });
  expect(data!.data.items.map((c) => c.id)).toEqual(companies.slice(1150));

  await t.db.migrate.down({ name: BLOCKS });
  expect(await t.db.schema.hasTable('list_member_blocks')).toBe(false);
  await t.db.migrate.up({ name: BLOCKS });
  expect(await blocks(big.id)).toEqual(cut.big);
  expect(await blocks(firms.id)).toEqual(cut.firms);
}, 180_000); // every migration one by one, then a server
