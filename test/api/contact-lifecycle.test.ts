/**
 * Pause, resume and move through HTTP: by ids or by address, in one campaign or everywhere; all or nothing
 * with unknown contacts (404 by id) and finished ones (409 naming the state); resume keeps the place in the
 * sequence; a move keeps or restarts the progress, never duplicates an address, and leaves events where
 * they happened.
 */
import { readJson, type ErrorBody } from '../helpers/bodies';
import knex from 'knex';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import { post } from './contact.helpers';

describe('contact pause, resume and move', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let a: string;
  let b: string;
  const ids: Record<string, string> = {};
  const status = async (id: string) =>
    (await ws.client.GET('/v1/contact/get', { params: { query: { contactId: id } } })).data!.data;

  beforeAll(async () => {
    t = await startTestServer();
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    a = (await ws.client.POST('/v2/campaign/create', { body: { name: 'A' } })).data!.data.campaign.id;
    b = (await ws.client.POST('/v2/campaign/create', { body: { name: 'B' } })).data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId: b,
        steps: [
          { delayDays: 0, variants: [{ subject: 'Hi', body: 'Hi' }] },
          { delayDays: 3, variants: [{ subject: '', body: 'Again' }] },
        ],
      },
    });
    for (const [campaign, emails] of [
      [a, ['ann@x.example', 'bob@x.example', 'cat@x.example', 'dan@x.example']],
      [b, ['ann@x.example', 'eve@x.example']],
    ] as const) {
      const added = await ws.client.POST('/v2/contact/add', {
        body: { campaignId: campaign, contacts: emails.map((email) => ({ email })) },
      });
      for (const c of added.data!.data.added) ids[`${campaign === a ? 'a' : 'b'}:${c.email}`] = c.id;
    }
    // Bob is at step 2, due in two days.
    await t.db('sending_progress').insert({
      contact_id: ids['a:bob@x.example'],
      workspace_id: ws.workspaceId,
      campaign_id: a,
      step_number: 2,
      state: 'waiting',
      due_at: new Date('2026-11-25T10:00:00Z'),
      attempts: 0,
      last_sent_at: new Date('2026-11-22T10:00:00Z'),
      updated_at: t.clock.now(),
    });
    await t.db('contacts').where({ id: ids['a:dan@x.example'] }).update({ status: 'unsubscribed' });
  });
  afterAll(() => t.close());

  it('pauses an address in every campaign, and resumes it where it stopped', async () => {
    const paused = await ws.client.POST('/v2/contact/pause', { body: { emails: ['ANN@x.example'] } });
    expect(paused.response.status).toBe(200);
    expect(paused.data!.data.changed.map((c) => [c.id, c.status]).sort()).toEqual(
      [
        [ids['a:ann@x.example'], 'paused'],
        [ids['b:ann@x.example'], 'paused'],
      ].sort(),
    );
    const again = await ws.client.POST('/v2/contact/pause', { body: { emails: ['ann@x.example'], campaignId: a } });
    expect(again.data!.data).toEqual({
      changed: [],
      unchanged: [{ contactId: ids['a:ann@x.example'], campaignId: a, email: 'ann@x.example', status: 'paused' }],
    });

    const bob = ids['a:bob@x.example'];
    await ws.client.POST('/v2/contact/pause', { body: { contactIds: [bob] } });
    expect((await status(bob)).contact.status).toBe('paused');
    t.clock.advance(5 * 86_400_000);
    const resumed = await ws.client.POST('/v2/contact/resume', { body: { contactIds: [bob, ids['a:ann@x.example']] } });
    expect(resumed.data!.data.changed.map((c) => c.status)).toEqual(['active', 'active']);
    const after = await status(bob);
    // Step 2, due when it was due: the gap after step 1 was kept, and it goes at the schedule's next open moment.
    expect(after.progress).toMatchObject({
      state: 'waiting',
      nextStep: 2,
      stepsSent: 1,
      nextDueAt: '2026-11-25T10:00:00.000Z',
    });
  });

  it('is all or nothing: unknown ids are a 404 by id, a finished contact a 409 naming its state', async () => {
    const cat = ids['a:cat@x.example'];
    const missing = newId();
    const res = await post(t, ws, '/v2/contact/pause', { contactIds: [cat, missing] });
    expect(res.status).toBe(404);
    expect((await readJson<ErrorBody>(res)).details).toEqual([
      {
        field: 'body.contactIds.1',
        location: 'body',
        message: `${missing} names no contact of this workspace`,
        code: 'notFound',
      },
    ]);
    const blocked = await post(t, ws, '/v2/contact/pause', { contactIds: [cat, ids['a:dan@x.example']] });
    expect(blocked.status).toBe(409);
    const body = await readJson<ErrorBody>(blocked);
    expect(body.error).toBe('1 contact cannot be paused: dan@x.example is unsubscribed.');
    expect(body.details[0]).toMatchObject({ field: 'body.contactIds.1', code: 'unsubscribed' });
    expect((await status(cat)).contact.status).toBe('active');
    expect((await post(t, ws, '/v2/contact/resume', { contactIds: [cat], emails: ['cat@x.example'] })).status).toBe(
      400,
    );
    expect((await post(t, ws, '/v2/contact/pause', {})).status).toBe(400);
    const other = await t.createWorkspace();
    expect((await post(t, other, '/v2/contact/pause', { contactIds: [cat] })).status).toBe(404);
  });

  it('moves contacts, keeping or restarting their progress, never duplicating an address', async () => {
    const bob = ids['a:bob@x.example'];
    const cat = ids['a:cat@x.example'];
    const ann = ids['a:ann@x.example'];
    await t.db('email_events').insert({
      id: newId(),
      workspace_id: ws.workspaceId,
      campaign_id: a,
      contact_id: bob,
      type: 'sent',
      is_warmup: false,
      flagged: false,
      occurred_at: t.clock.now(),
    });
    const other = await t.createWorkspace();
    const foreign = (await other.client.POST('/v2/campaign/create', { body: { name: 'Theirs' } })).data!.data.campaign
      .id;
    expect((await post(t, ws, '/v2/contact/move', { contactIds: [bob], toCampaignId: foreign })).status).toBe(404);

    const moved = await ws.client.POST('/v2/contact/move', {
      body: { contactIds: [bob, ann], toCampaignId: b, keepProgress: true },
    });
    expect(moved.response.status).toBe(200);
    expect(moved.data!.data.moved.map((c) => [c.id, c.campaignId])).toEqual([[bob, b]]);
    expect(moved.data!.data.alreadyInTarget).toEqual([
      { contactId: ann, email: 'ann@x.example', existingContactId: ids['b:ann@x.example'] },
    ]);
    expect((await status(bob)).progress).toMatchObject({ nextStep: 2, nextDueAt: '2026-11-25T10:00:00.000Z' });
    expect(await t.db('sending_progress').where({ contact_id: bob }).first('campaign_id')).toEqual({ campaign_id: b });
    // What happened stays where it happened.
    expect(await t.db('email_events').where({ contact_id: bob }).pluck('campaign_id')).toEqual([a]);

    const restart = await ws.client.POST('/v2/contact/move', { body: { contactIds: [bob, cat], toCampaignId: a } });
    expect(restart.data!.data.moved.map((c) => c.id)).toEqual([bob]);
    expect(restart.data!.data.alreadyInTarget).toEqual([
      { contactId: cat, email: 'cat@x.example', existingContactId: cat },
    ]);
    expect((await status(bob)).progress).toBeNull();
    const res = await post(t, ws, '/v2/contact/move', { contactIds: [cat, newId()], toCampaignId: b });
    expect(res.status).toBe(404);
    expect((await status(cat)).contact.campaignId).toBe(a);
  });

  // PostgreSQL only: the embedded database has one connection, so no other request can add meanwhile.
  (process.env.TEST_DATABASE_URL ? it : it.skip)(
    'reports an address added to the target while the move runs, never a 500',
    async () => {
      const fay = (
        await ws.client.POST('/v2/contact/add', { body: { campaignId: a, contacts: [{ email: 'fay@x.example' }] } })
      ).data!.data.added[0].id;
      const other = knex({ client: 'pg', connection: t.databaseUrl });
      try {
        const adder = await other.transaction();
        const rival = newId();
        await adder('contacts').insert({
          id: rival,
          workspace_id: ws.workspaceId,
          campaign_id: b,
          email: 'fay@x.example',
          created_at: t.clock.now(),
          updated_at: t.clock.now(),
        });
        // The move reads no holder (the rival is not committed), then its update waits on the rival's index entry.
        const moving = ws.client.POST('/v2/contact/move', { body: { contactIds: [fay], toCampaignId: b } });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await adder.commit();
        const moved = await moving;
        expect(moved.response.status).toBe(200);
        expect(moved.data!.data).toMatchObject({
          moved: [],
          alreadyInTarget: [{ contactId: fay, email: 'fay@x.example', existingContactId: rival }],
        });
        expect((await status(fay)).contact.campaignId).toBe(a);
      } finally {
        await other.destroy();
      }
    },
  );
});
