/**
 * The counters that replace count(*) on hot paths (contact_counts, kept by triggers on contacts): after every
 * path that adds, deletes, moves or changes the status of contacts they equal count(*), and what reads them
 * (the plan cap, the campaign list, analytics) answers as counting would. Also: the sending engine's progress
 * rows are made when contacts join an active campaign or it goes active, never by a worker run.
 */
import type { ContactRow } from '../../server/modules/contact/store';
import { readJson, type Success } from '../helpers/bodies';
import { found } from '../helpers/rows';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import { createCampaign, readyCampaign } from './campaign-helpers';
import { jane, luis, insertFixtures } from './people-search-fixtures';

let t: TestServer;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await startTestServer();
  t.clock.set('2026-11-23T10:00:00.000Z');
  ws = await t.createWorkspace({ credits: 100 });
  await insertFixtures(t.db);
});
afterAll(() => t.close());

/** The counters (zero rows left out) beside count(*) of every campaign of the database. */
async function expectCountersExact(): Promise<void> {
  const counted: { campaign_id: string; status: string; n: number }[] = await t
    .db('contacts')
    .groupBy('campaign_id', 'status')
    .orderBy(['campaign_id', 'status'])
    .select('campaign_id', 'status', t.db.raw('count(*)::int AS n'));
  const kept = await t
    .db('contact_counts')
    .where('n', '<>', 0)
    .orderBy(['campaign_id', 'status'])
    .select('campaign_id', 'status', 'n');
  expect(kept).toEqual(counted);
}

const add = (campaignId: string, emails: string[], workspace = ws) =>
  workspace.client.POST('/v1/contact/add', { body: { campaignId, contacts: emails.map((email) => ({ email })) } });
const progressOf = async (contactId: string) =>
  (await ws.client.GET('/v1/contact/get', { params: { query: { contactId } } })).data!.data.progress;

describe('contact counters', () => {
  it('stay exact through add, pause, resume, move, mail outcomes, delete and a deleted campaign, and are what the campaign list and analytics read', async () => {
    const a = (await createCampaign(ws, { name: 'A' })).id;
    const b = (await createCampaign(ws, { name: 'B' })).id;
    const added = (await add(a, ['ann@x.test', 'bob@x.test', 'cat@x.test', 'dan@y.test', 'eve@y.test'])).data!.data
      .added;
    const id = Object.fromEntries(added.map((c) => [c.email, c.id]));
    await add(b, ['ann@x.test', 'fay@x.test']);
    await expectCountersExact();

    expect((await ws.client.POST('/v2/contact/pause', { body: { emails: ['ann@x.test'] } })).response.status).toBe(200);
    await expectCountersExact();
    expect(
      (await ws.client.POST('/v2/contact/resume', { body: { contactIds: [id['ann@x.test']] } })).response.status,
    ).toBe(200);
    await expectCountersExact();
    expect(
      (
        await ws.client.POST('/v2/contact/move', {
          body: { contactIds: [id['bob@x.test'], id['ann@x.test']], toCampaignId: b },
        })
      ).data!.data.moved,
    ).toHaveLength(1);
    await expectCountersExact();

    // What replies, bounces, unsubscribes and stop-for-company do to contacts (the inbox, the engine, tracking).
    await t.db.transaction(async (trx) => {
      await t.services.contacts.finishForMail(trx, ws.workspaceId, id['cat@x.test'], 'completed');
      await t.services.contacts.finishForMail(trx, ws.workspaceId, id['cat@x.test'], 'bounced');
      await t.services.contacts.unsubscribeForMail(trx, ws.workspaceId, id['eve@y.test']);
      await t.services.contacts.finishCompany(trx, ws.workspaceId, a, 'y.test');
    });
    await expectCountersExact();

    expect(
      (await ws.client.POST('/v1/contact/delete', { body: { contactId: id['ann@x.test'] } })).response.status,
    ).toBe(200);
    await expectCountersExact();

    const list = (await ws.client.GET('/v1/campaign/list', { params: { query: { limit: 100 } } })).data!.data.items;
    const byId = new Map(list.map((c) => [c.id, c]));
    for (const campaign of [a, b]) {
      const n = Number((await t.db('contacts').where({ campaign_id: campaign }).count('* as n'))[0].n);
      expect(byId.get(campaign)!.counts.contacts).toBe(n);
    }
    const analytics = await ws.client.GET('/v1/analytics/campaign/count', {
      params: { query: { campaignId: a } } as never,
    });
    const statuses: { status: string; n: number }[] = await t
      .db('contacts')
      .where({ campaign_id: a })
      .groupBy('status')
      .select('status', t.db.raw('count(*)::int AS n'));
    const body = JSON.stringify(analytics.data);
    for (const { status, n } of statuses) expect(body).toContain(`"${status}":${n}`);

    // A campaign deleted with its contacts (cascade) leaves no counter behind.
    await t.db('campaigns').where({ id: a }).delete();
    await expectCountersExact();
    expect(await t.db('contact_counts').where({ campaign_id: a })).toEqual([]);
  });

  it('stay exact through a job import and a list sent to a campaign', async () => {
    const campaignId = (await createCampaign(ws, { name: 'Imported' })).id;
    const res = await t.fetch(`/v2/job/contact-import?campaignId=${campaignId}`, {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'Content-Type': 'text/csv' },
      body: ['email', 'one@import.test', 'two@import.test', 'one@import.test', 'three@import.test'].join('\r\n'),
    });
    expect(res.status).toBe(202);
    while ((await t.services.jobs.runOnce()) > 0);
    expect(Number((await t.db('contacts').where({ campaign_id: campaignId }).count('* as n'))[0].n)).toBe(3);
    await expectCountersExact();

    const listRes = await ws.client.POST('/v2/list/create/people', { body: { name: `Send ${newId()}` } });
    const listId = listRes.data!.data.list.id;
    await ws.client.POST('/v2/list/add/leads', { body: { listId, personIds: [jane.id, luis.id] } });
    const sent = await t.fetch('/v2/list/send-to-campaign', {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ listId, campaignId }),
    });
    expect(sent.status).toBe(200);
    expect((await readJson<Success<'/v2/list/send-to-campaign', 'post'>>(sent)).data.counts.added).toBe(2);
    await expectCountersExact();
  });

  it('are what the plan cap counts: the workspace total across its campaigns', async () => {
    const planId = newId();
    await t.db('plans').insert({
      id: planId,
      name: 'Capped',
      per_min: 1000,
      per_hour: 1000,
      per_day: 1000,
      credits: 0,
      max_contacts: 4,
      created_at: t.clock.now(),
    });
    const capped = await t.createWorkspace();
    await t.db('workspaces').where({ id: capped.workspaceId }).update({ plan_id: planId });
    const one = (await createCampaign(capped, { name: 'One' })).id;
    const two = (await createCampaign(capped, { name: 'Two' })).id;
    expect((await add(one, ['a@c.test', 'b@c.test'], capped)).response.status).toBe(200);
    expect((await add(two, ['c@c.test'], capped)).response.status).toBe(200);
    const over = await add(two, ['d@c.test', 'e@c.test'], capped);
    expect(over.response.status).toBe(403);
    expect((over.error as { error: string }).error).toBe(
      'Your plan allows 4 contacts; the workspace holds 3 and this request would add 2.',
    );
    // Status changes do not change the total; a delete frees a place.
    await t.db('contacts').where({ campaign_id: one }).update({ status: 'completed' });
    const first = await found(
      t.db('contacts').where({ campaign_id: one }).first<Pick<ContactRow, 'id'> | undefined>('id'),
      'contact',
    );
    expect((await capped.client.POST('/v1/contact/delete', { body: { contactId: first.id } })).response.status).toBe(
      200,
    );
    expect((await add(two, ['d@c.test', 'e@c.test'], capped)).response.status).toBe(200);
    await expectCountersExact();
  });

  (process.env.TEST_DATABASE_URL ? it : it.skip)(
    'stay exact, and the cap holds, under concurrent adds (PostgreSQL)',
    async () => {
      const planId = newId();
      await t.db('plans').insert({
        id: planId,
        name: 'Capped 25',
        per_min: 100000,
        per_hour: 100000,
        per_day: 100000,
        credits: 0,
        max_contacts: 25,
        created_at: t.clock.now(),
      });
      const capped = await t.createWorkspace();
      await t.db('workspaces').where({ id: capped.workspaceId }).update({ plan_id: planId });
      const campaigns = [
        (await createCampaign(capped, { name: 'P' })).id,
        (await createCampaign(capped, { name: 'Q' })).id,
      ];
      const free = [(await createCampaign(ws, { name: 'R' })).id, (await createCampaign(ws, { name: 'S' })).id];
      // Overlapping addresses in one campaign race on its unique index; the capped ones race on the cap.
      const requests = Array.from({ length: 12 }, (_, i) => [
        add(
          free[i % 2],
          Array.from({ length: 20 }, (_, k) => `p${(i * 7 + k) % 50}@race.test`),
        ),
        add(
          campaigns[i % 2],
          Array.from({ length: 4 }, (_, k) => `q${i}-${k}@race.test`),
          capped,
        ),
      ]).flat();
      const statuses = (await Promise.all(requests)).map((r) => r.response.status);
      expect(statuses.filter((s) => s !== 200 && s !== 403)).toEqual([]);
      const held = Number((await t.db('contacts').where({ workspace_id: capped.workspaceId }).count('* as n'))[0].n);
      expect(held).toBe(24);
      await expectCountersExact();
    },
  );
});

describe('progress rows', () => {
  it('are made when contacts join an active campaign or it goes active, never by a worker run', async () => {
    const { campaign } = await readyCampaign(t, ws);
    const draft = (await add(campaign.id, ['p1@prog.test', 'p2@prog.test'])).data!.data.added;
    await ws.client.POST('/v2/contact/pause', { body: { contactIds: [draft[1].id] } });
    expect(await t.services.sending.runOnce()).toBe(0);
    expect(await progressOf(draft[0].id)).toBeNull();

    t.clock.advance(60_000);
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } })).response.status).toBe(
      200,
    );
    expect(await progressOf(draft[0].id)).toMatchObject({
      state: 'waiting',
      nextStep: 1,
      stepsSent: 0,
      nextDueAt: '2026-11-23T10:01:00.000Z',
    });
    // Paused at launch: none until resumed.
    expect(await progressOf(draft[1].id)).toBeNull();
    t.clock.advance(60_000);
    await ws.client.POST('/v2/contact/resume', { body: { contactIds: [draft[1].id] } });
    expect(await progressOf(draft[1].id)).toMatchObject({ state: 'waiting', nextDueAt: '2026-11-23T10:02:00.000Z' });

    const late = (await add(campaign.id, ['p3@prog.test'])).data!.data.added[0];
    expect(await progressOf(late.id)).toMatchObject({
      state: 'waiting',
      nextStep: 1,
      nextDueAt: '2026-11-23T10:02:00.000Z',
    });

    // Moved into an active campaign with its progress dropped: step 1 there at once.
    const other = (await createCampaign(ws, { name: 'Elsewhere' })).id;
    const moving = (await add(other, ['p4@prog.test'])).data!.data.added[0];
    expect(await progressOf(moving.id)).toBeNull();
    await ws.client.POST('/v2/contact/move', { body: { contactIds: [moving.id], toCampaignId: campaign.id } });
    expect(await progressOf(moving.id)).toMatchObject({ state: 'waiting', nextStep: 1 });
  });
});
