import { expect } from '@jest/globals';
import { newId } from '../../server/platform/ids';
import { startTestServer, type TestServer } from '../helpers/server';
import { createCampaign, insertAccount, raw, readyCampaign, schedule } from './campaign-helpers';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('POST /v2/campaign/create', () => {
  it('creates a draft with default options and no schedule', async () => {
    const ws = await t.createWorkspace();
    const { data, response } = await ws.client.POST('/v2/campaign/create', { body: { name: '  Q4 SaaS founders ' } });
    expect(response.status).toBe(201);
    const now = t.clock.now().toISOString();
    expect(data).toEqual({
      status: 'success',
      success: true,
      message: 'Campaign created',
      data: {
        campaign: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          name: 'Q4 SaaS founders',
          status: 'draft',
          schedule: null,
          options: {
            dailyLimit: null,
            stopOnReply: true,
            stopForCompany: false,
            stopOnAutoReply: false,
            intentSetsLeadStatus: true,
            trackOpens: true,
            trackClicks: true,
            textOnly: false,
            sendInLeadTimezone: false,
            emailGapMinutes: 10,
            randomWaitMaxMinutes: 5,
            dailyNewContacts: null,
            trackingDomainId: null,
            recipientDomainDailyLimit: null,
            matchProvider: false,
            matchProviderStrict: false,
            sendPriority: 'dueFirst',
            firstEmailTextOnly: false,
            cc: [],
            bcc: [],
            stopOnOpen: false,
            stopOnClick: false,
            verifiedOnly: false,
          },
          counts: { steps: 0, accounts: 0, contacts: 0 },
          pauseReason: null,
          launchedAt: null,
          createdAt: now,
          updatedAt: now,
        },
      },
    });
  });

  it('takes options, a schedule and accounts at once', async () => {
    const ws = await t.createWorkspace();
    const accountId = await insertAccount(t, ws.workspaceId);
    const campaign = await createCampaign(ws, {
      options: { dailyLimit: 200, trackClicks: false },
      schedule: { timezone: 'utc', days: [5, 1], from: '08:30', to: '18:00', startDate: '2026-12-01' },
      accountIds: [accountId],
    });
    expect(campaign.options).toEqual({
      dailyLimit: 200,
      stopOnReply: true,
      stopForCompany: false,
      stopOnAutoReply: false,
      intentSetsLeadStatus: true,
      trackOpens: true,
      trackClicks: false,
      textOnly: false,
      sendInLeadTimezone: false,
      emailGapMinutes: 10,
      randomWaitMaxMinutes: 5,
      dailyNewContacts: null,
      trackingDomainId: null,
      recipientDomainDailyLimit: null,
      matchProvider: false,
      matchProviderStrict: false,
      sendPriority: 'dueFirst',
      firstEmailTextOnly: false,
      cc: [],
      bcc: [],
      stopOnOpen: false,
      stopOnClick: false,
      verifiedOnly: false,
    });
    // The zone is stored under its canonical name and the days in order.
    expect(campaign.schedule).toEqual({
      timezone: 'UTC',
      days: [1, 5],
      from: '08:30',
      to: '18:00',
      startDate: '2026-12-01',
      endDate: null,
    });
    expect(campaign.counts).toEqual({ steps: 0, accounts: 1, contacts: 0 });
  });

  it('rejects a blank name, with the field in v2 details', async () => {
    const ws = await t.createWorkspace();
    const res = await raw(t, ws, 'POST', '/v2/campaign/create', { name: '   ' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'body.name: must not be blank.',
      code: 'validation_error',
      statusCode: 400,
    });
    expect(res.body.details).toEqual([
      { field: 'body.name', location: 'body', message: 'must not be blank.', code: 'blank' },
    ]);
  });

  it('rejects unknown fields and wrong types through the schema', async () => {
    const ws = await t.createWorkspace();
    const res = await raw(t, ws, 'POST', '/v2/campaign/create', {
      name: 'x',
      colour: 'red',
      options: { dailyLimit: 0 },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.colour', code: 'additionalProperties' })]);
    const limit = await raw(t, ws, 'POST', '/v2/campaign/create', { name: 'x', options: { dailyLimit: 0 } });
    expect(limit.body.details).toEqual([
      expect.objectContaining({ field: 'body.options.dailyLimit', code: 'minimum' }),
    ]);
  });

  it("answers 404 naming every account that is not the workspace's, and creates nothing", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const mine = await insertAccount(t, ws.workspaceId);
    const theirs = await insertAccount(t, other.workspaceId);
    const missing = newId();
    const res = await raw(t, ws, 'POST', '/v2/campaign/create', { name: 'x', accountIds: [mine, theirs, missing] });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe(`Email account not found: ${theirs}, ${missing}.`);
    expect(res.body.details.map((d) => d.field)).toEqual(['body.accountIds.1', 'body.accountIds.2']);
    expect(Number((await t.db('campaigns').where({ workspace_id: ws.workspaceId }).count({ n: '*' }))[0].n)).toBe(0);
  });

  it('is v2 only', async () => {
    const ws = await t.createWorkspace();
    const res = await raw(t, ws, 'POST', '/v1/campaign/create', { name: 'x' });
    expect(res.status).toBe(404);
  });
});

describe('schedules', () => {
  it('sets the schedule and changes only the named options', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws, { options: { dailyLimit: 100, textOnly: true } });
    t.clock.advance(60_000);
    const { data, response } = await ws.client.POST('/v2/campaign/set/schedules', {
      body: {
        campaignId: campaign.id,
        schedule: { ...schedule, startDate: '2026-12-01', endDate: '2026-12-31' },
        options: { stopOnReply: false, dailyLimit: null },
      },
    });
    expect(response.status).toBe(200);
    expect(data!.message).toBe('Campaign schedule updated');
    expect(data!.data.campaign.schedule).toEqual({ ...schedule, startDate: '2026-12-01', endDate: '2026-12-31' });
    expect(data!.data.campaign.options).toEqual({
      dailyLimit: null,
      stopOnReply: false,
      stopForCompany: false,
      stopOnAutoReply: false,
      intentSetsLeadStatus: true,
      trackOpens: true,
      trackClicks: true,
      textOnly: true,
      sendInLeadTimezone: false,
      emailGapMinutes: 10,
      randomWaitMaxMinutes: 5,
      dailyNewContacts: null,
      trackingDomainId: null,
      recipientDomainDailyLimit: null,
      matchProvider: false,
      matchProviderStrict: false,
      sendPriority: 'dueFirst',
      firstEmailTextOnly: false,
      cc: [],
      bcc: [],
      stopOnOpen: false,
      stopOnClick: false,
      verifiedOnly: false,
    });
    expect(data!.data.campaign.updatedAt).toBe(t.clock.now().toISOString());
  });

  it('rejects an unknown zone, from after to and end before start, naming each field', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const res = await raw(t, ws, 'POST', '/v2/campaign/set/schedules', {
      campaignId: campaign.id,
      schedule: {
        timezone: 'Mars/Olympus',
        days: [1],
        from: '17:00',
        to: '09:00',
        startDate: '2026-12-31',
        endDate: '2026-12-01',
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d) => [d.field, d.code])).toEqual([
      ['body.schedule.timezone', 'timezone'],
      ['body.schedule.to', 'time_range'],
      ['body.schedule.endDate', 'date_range'],
    ]);
    expect(res.body.error).toBe(
      'body.schedule.timezone: "Mars/Olympus" is not an IANA time zone name (such as America/New_York or UTC). (and 2 more problems)',
    );
    const after = await ws.client.GET('/v1/campaign/list', {});
    expect(after.data!.data.items[0].schedule).toBeNull();
  });

  it('rejects offsets, equal from/to, bad days and bad times through v1 format too', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    for (const bad of [
      { ...schedule, timezone: '+05:00' },
      { ...schedule, from: '09:00', to: '09:00' },
      { ...schedule, days: [1, 1] },
      { ...schedule, days: [7] },
      { ...schedule, from: '9:00' },
      { ...schedule, startDate: '2026-02-30' },
    ]) {
      const res = await raw(t, ws, 'POST', '/v2/campaign/set/schedules', { campaignId: campaign.id, schedule: bad });
      expect([res.status, JSON.stringify(bad)]).toEqual([400, JSON.stringify(bad)]);
    }
  });

  it("answers 404 for another workspace's campaign", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const campaign = await createCampaign(other);
    const res = await raw(t, ws, 'POST', '/v2/campaign/set/schedules', { campaignId: campaign.id, schedule });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: 'Campaign not found.', code: 'not_found' });
  });
});

describe('GET /v1/campaign/list', () => {
  it('pages newest first with a stable tie-break and filters by status', async () => {
    const ws = await t.createWorkspace();
    const a = await createCampaign(ws, { name: 'A' });
    t.clock.advance(1000);
    const b = await createCampaign(ws, { name: 'B' });
    const c = await createCampaign(ws, { name: 'C' }); // same createdAt as B: the id breaks the tie
    const first = await ws.client.GET('/v1/campaign/list', { params: { query: { limit: 2 } } });
    expect(first.data!.message).toBe('Campaigns retrieved');
    expect(first.data!.data.items.map((x) => x.name)).toEqual(['C', 'B']);
    expect(first.data!.data.pagination).toEqual({ limit: 2, skip: 0, total: 3, hasMore: true });
    const second = await ws.client.GET('/v1/campaign/list', { params: { query: { limit: 2, skip: 2 } } });
    expect(second.data!.data.items.map((x) => x.id)).toEqual([a.id]);
    expect(second.data!.data.pagination).toEqual({ limit: 2, skip: 2, total: 3, hasMore: false });
    // A page past the end still tells the total (it has no row to carry it).
    const past = await ws.client.GET('/v1/campaign/list', { params: { query: { limit: 2, skip: 5 } } });
    expect(past.data!.data).toEqual({ items: [], pagination: { limit: 2, skip: 5, total: 3, hasMore: false } });

    await t.db('campaigns').where({ id: b.id }).update({ status: 'paused' });
    const paused = await ws.client.GET('/v1/campaign/list', { params: { query: { status: 'paused' } } });
    expect(paused.data!.data.items.map((x) => x.id)).toEqual([b.id]);
    expect(paused.data!.data.pagination.total).toBe(1);
    const drafts = await ws.client.GET('/v1/campaign/list', { params: { query: { status: 'draft' } } });
    expect(drafts.data!.data.items.map((x) => x.id)).toEqual([c.id, a.id]);
  });

  it("never shows another workspace's campaigns", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    await createCampaign(other);
    const { data } = await ws.client.GET('/v1/campaign/list', {});
    expect(data!.data).toEqual({ items: [], pagination: { limit: 20, skip: 0, total: 0, hasMore: false } });
  });

  it('rejects a bad status or limit in both error formats', async () => {
    const ws = await t.createWorkspace();
    const v1 = await raw(t, ws, 'GET', '/v1/campaign/list?status=running');
    expect(v1.status).toBe(400);
    expect(Object.keys(v1.body)).toEqual(['error']);
    const v2 = await raw(t, ws, 'GET', '/v2/campaign/list?limit=101');
    expect(v2.status).toBe(400);
    expect(v2.body.details).toEqual([
      expect.objectContaining({ field: 'query.limit', location: 'query', code: 'maximum' }),
    ]);
  });
});

describe('get/name, get/status, set/name', () => {
  it('reads and renames a campaign', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws, { name: 'Old' });
    const name = await ws.client.GET('/v1/campaign/get/name', { params: { query: { campaignId: campaign.id } } });
    expect(name.data).toEqual({
      status: 'success',
      success: true,
      message: 'Campaign name retrieved',
      data: { id: campaign.id, name: 'Old' },
    });
    const status = await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId: campaign.id } } });
    expect(status.data!.data).toEqual({ id: campaign.id, status: 'draft', pauseReason: null, launchedAt: null });
    t.clock.advance(5000);
    const renamed = await ws.client.POST('/v1/campaign/set/name', { body: { campaignId: campaign.id, name: ' New ' } });
    expect(renamed.data!.message).toBe('Campaign name updated');
    expect(renamed.data!.data.campaign).toMatchObject({
      id: campaign.id,
      name: 'New',
      updatedAt: t.clock.now().toISOString(),
      createdAt: campaign.createdAt,
    });
  });

  it("answers 404 for another workspace's or an unknown campaign, in v1 and v2", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const theirs = await createCampaign(other);
    for (const path of ['/v1/campaign/get/name', '/v1/campaign/get/status', '/v1/campaign/get/accounts']) {
      const v1 = await raw(t, ws, 'GET', `${path}?campaignId=${theirs.id}`);
      expect([path, v1.status, v1.body]).toEqual([path, 404, { error: 'Campaign not found.' }]);
      const v2 = await raw(t, ws, 'GET', `${path.replace('/v1', '/v2')}?campaignId=${newId()}`);
      expect(v2.status).toBe(404);
      expect(v2.body).toMatchObject({ error: 'Campaign not found.', code: 'not_found', details: [] });
    }
    const rename = await raw(t, ws, 'POST', '/v1/campaign/set/name', { campaignId: theirs.id, name: 'Mine now' });
    expect(rename).toEqual({ status: 404, body: { error: 'Campaign not found.' } });
    const still = await other.client.GET('/v1/campaign/get/name', { params: { query: { campaignId: theirs.id } } });
    expect(still.data!.data.name).toBe('Q4 founders');
  });

  it('validates the id and the name', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const badId = await raw(t, ws, 'GET', '/v2/campaign/get/name?campaignId=42');
    expect(badId.status).toBe(400);
    expect(badId.body.details[0]).toMatchObject({ field: 'query.campaignId', code: 'format' });
    const blank = await raw(t, ws, 'POST', '/v1/campaign/set/name', { campaignId: campaign.id, name: ' ' });
    expect(blank).toEqual({ status: 400, body: { error: 'body.name: must not be blank.' } });
    const long = await raw(t, ws, 'POST', '/v2/campaign/set/name', { campaignId: campaign.id, name: 'x'.repeat(201) });
    expect(long.status).toBe(400);
    expect(long.body.details[0]).toMatchObject({ field: 'body.name', code: 'maxLength' });
  });
});

describe('linked accounts', () => {
  it('sets, adds, lists and removes accounts', async () => {
    const ws = await t.createWorkspace();
    const [a, b, c] = [
      await insertAccount(t, ws.workspaceId),
      await insertAccount(t, ws.workspaceId, { status: 'paused', provider: 'smtp' }),
      await insertAccount(t, ws.workspaceId),
    ];
    const campaign = await createCampaign(ws, { accountIds: [a] });

    t.clock.advance(1000);
    const set = await ws.client.POST('/v1/campaign/set/accounts', {
      body: { campaignId: campaign.id, accountIds: [b, c] },
    });
    expect(set.data).toEqual({
      status: 'success',
      success: true,
      message: 'Campaign accounts set',
      data: { campaignId: campaign.id, accountIds: [b, c].sort(), added: [b, c], removed: [a] },
    });

    t.clock.advance(1000);
    const add = await ws.client.POST('/v1/campaign/add/account', { body: { campaignId: campaign.id, accountId: a } });
    expect(add.data!.data).toEqual({
      campaignId: campaign.id,
      accountIds: [...[b, c].sort(), a],
      added: [a],
      removed: [],
    });
    const again = await ws.client.POST('/v1/campaign/add/account', { body: { campaignId: campaign.id, accountId: a } });
    expect(again.data!.data.added).toEqual([]);

    const list = await ws.client.GET('/v1/campaign/get/accounts', {
      params: { query: { campaignId: campaign.id, limit: 2, skip: 1 } },
    });
    expect(list.data!.message).toBe('Campaign accounts retrieved');
    expect(list.data!.data.pagination).toEqual({ limit: 2, skip: 1, total: 3, hasMore: false });
    expect(list.data!.data.items).toHaveLength(2);
    expect(list.data!.data.items[1]).toEqual({
      id: a,
      email: expect.stringMatching(/@acme-mail\.io$/),
      provider: 'google',
      status: 'active',
      dailyLimit: 50,
      linkedAt: t.clock.now().toISOString(),
    });
    const all = await ws.client.GET('/v1/campaign/get/accounts', { params: { query: { campaignId: campaign.id } } });
    expect(all.data!.data.items.map((x) => [x.id, x.status, x.provider])).toEqual([
      ...[b, c].sort().map((id) => (id === b ? [b, 'paused', 'smtp'] : [c, 'active', 'google'])),
      [a, 'active', 'google'],
    ]);

    const removed = await ws.client.POST('/v1/campaign/remove/accounts', {
      body: { campaignId: campaign.id, accountIds: [b, a] },
    });
    expect(removed.data!.data).toEqual({ campaignId: campaign.id, accountIds: [c], added: [], removed: [b, a] });
    const notLinked = await ws.client.POST('/v1/campaign/remove/accounts', {
      body: { campaignId: campaign.id, accountIds: [a] },
    });
    expect(notLinked.data!.data).toEqual({ campaignId: campaign.id, accountIds: [c], added: [], removed: [] });
  });

  it("rejects another workspace's and unknown accounts by index, and changes nothing", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const mine = await insertAccount(t, ws.workspaceId);
    const theirs = await insertAccount(t, other.workspaceId);
    const campaign = await createCampaign(ws, { accountIds: [mine] });
    const unknown = newId();

    const set = await raw(t, ws, 'POST', '/v2/campaign/set/accounts', {
      campaignId: campaign.id,
      accountIds: [theirs, mine, unknown],
    });
    expect(set.status).toBe(404);
    expect(set.body.error).toBe(`Email account not found: ${theirs}, ${unknown}.`);
    expect(set.body.details).toEqual([
      {
        field: 'body.accountIds.0',
        location: 'body',
        message: `Email account ${theirs} not found in this workspace.`,
        code: 'not_found',
      },
      {
        field: 'body.accountIds.2',
        location: 'body',
        message: `Email account ${unknown} not found in this workspace.`,
        code: 'not_found',
      },
    ]);
    const add = await raw(t, ws, 'POST', '/v2/campaign/add/account', { campaignId: campaign.id, accountId: theirs });
    expect(add.status).toBe(404);
    expect(add.body.details.map((d) => d.field)).toEqual(['body.accountId']);
    const remove = await raw(t, ws, 'POST', '/v1/campaign/remove/accounts', {
      campaignId: campaign.id,
      accountIds: [mine, unknown],
    });
    expect(remove).toEqual({ status: 404, body: { error: `Email account not found: ${unknown}.` } });

    const linked = await t.db('campaign_accounts').where({ campaign_id: campaign.id }).pluck('account_id');
    expect(linked).toEqual([mine]);
  });

  it("answers 404 for another workspace's campaign", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const account = await insertAccount(t, ws.workspaceId);
    const theirs = await createCampaign(other);
    const res = await raw(t, ws, 'POST', '/v1/campaign/add/account', { campaignId: theirs.id, accountId: account });
    expect(res).toEqual({ status: 404, body: { error: 'Campaign not found.' } });
  });

  it('validates the body', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const id = newId();
    const dup = await raw(t, ws, 'POST', '/v2/campaign/set/accounts', {
      campaignId: campaign.id,
      accountIds: [id, id],
    });
    expect(dup.status).toBe(400);
    expect(dup.body.details[0]).toMatchObject({ field: 'body.accountIds', code: 'uniqueItems' });
    const empty = await raw(t, ws, 'POST', '/v1/campaign/remove/accounts', { campaignId: campaign.id, accountIds: [] });
    expect(empty.status).toBe(400);
    expect(Object.keys(empty.body)).toEqual(['error']);
  });

  it('keeps an active campaign with at least one account, but links more while active', async () => {
    const ws = await t.createWorkspace();
    const { campaign, accountId } = await readyCampaign(t, ws);
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    const extra = await insertAccount(t, ws.workspaceId);
    const add = await ws.client.POST('/v1/campaign/add/account', {
      body: { campaignId: campaign.id, accountId: extra },
    });
    expect(add.response.status).toBe(200);

    const none = await raw(t, ws, 'POST', '/v2/campaign/set/accounts', { campaignId: campaign.id, accountIds: [] });
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({
      code: 'conflict',
      error: 'An active campaign keeps at least one linked email account: pause it first, or link another account.',
    });
    const all = await raw(t, ws, 'POST', '/v1/campaign/remove/accounts', {
      campaignId: campaign.id,
      accountIds: [accountId, extra],
    });
    expect(all.status).toBe(409);
    const one = await ws.client.POST('/v1/campaign/remove/accounts', {
      body: { campaignId: campaign.id, accountIds: [accountId] },
    });
    expect(one.data!.data.accountIds).toEqual([extra]);

    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: campaign.id } });
    const emptied = await ws.client.POST('/v1/campaign/set/accounts', {
      body: { campaignId: campaign.id, accountIds: [] },
    });
    expect(emptied.data!.data).toEqual({ campaignId: campaign.id, accountIds: [], added: [], removed: [extra] });
  });
});

describe('launch and pause', () => {
  it('launches a ready draft, pauses it and resumes it', async () => {
    const ws = await t.createWorkspace();
    const { campaign } = await readyCampaign(t, ws);
    t.clock.advance(60_000);
    const launchedAt = t.clock.now().toISOString();
    const launched = await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    expect(launched.response.status).toBe(200);
    expect(launched.data!.message).toBe('Campaign launched');
    expect(launched.data!.data.campaign).toMatchObject({
      status: 'active',
      launchedAt,
      updatedAt: launchedAt,
      counts: { steps: 1, accounts: 1, contacts: 0 },
    });

    t.clock.advance(60_000);
    const paused = await ws.client.POST('/v2/campaign/pause', { body: { campaignId: campaign.id } });
    expect(paused.data!.message).toBe('Campaign paused');
    expect(paused.data!.data.campaign).toMatchObject({ status: 'paused', launchedAt });
    const status = await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId: campaign.id } } });
    expect(status.data!.data).toEqual({
      id: campaign.id,
      status: 'paused',
      pauseReason: { code: 'user', message: 'Paused with POST /v2/campaign/pause.' },
      launchedAt,
    });

    t.clock.advance(60_000);
    const resumed = await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    // launchedAt keeps the first launch.
    expect(resumed.data!.data.campaign).toMatchObject({ status: 'active', pauseReason: null, launchedAt });
  });

  it('names every missing piece in the 409 and changes nothing', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws, {
      accountIds: [await insertAccount(t, ws.workspaceId, { status: 'connectionError' })],
    });
    const res = await raw(t, ws, 'POST', '/v2/campaign/launch', { campaignId: campaign.id });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe(
      'Campaign cannot be launched: no sequence step, no active email account linked, no schedule.',
    );
    expect(res.body.details.map((d) => [d.field, d.code])).toEqual([
      ['body.campaignId', 'no_sequence_step'],
      ['body.campaignId', 'no_active_account'],
      ['body.campaignId', 'no_schedule'],
    ]);
    const status = await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId: campaign.id } } });
    expect(status.data!.data.status).toBe('draft');
  });

  it('names only what is missing', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws, { schedule, accountIds: [await insertAccount(t, ws.workspaceId)] });
    const res = await raw(t, ws, 'POST', '/v2/campaign/launch', { campaignId: campaign.id });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('Campaign cannot be launched: no sequence step.');
    expect(res.body.details).toHaveLength(1);
  });

  it('refuses to launch an active campaign and to pause a draft or paused one', async () => {
    const ws = await t.createWorkspace();
    const { campaign } = await readyCampaign(t, ws);
    const draftPause = await raw(t, ws, 'POST', '/v2/campaign/pause', { campaignId: campaign.id });
    expect(draftPause.status).toBe(409);
    expect(draftPause.body.error).toBe(
      'Campaign is not active (status: draft); only an active campaign can be paused.',
    );
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    const again = await raw(t, ws, 'POST', '/v2/campaign/launch', { campaignId: campaign.id });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'Campaign is already active.', details: [{ code: 'invalid_status' }] });
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: campaign.id } });
    const pausedPause = await raw(t, ws, 'POST', '/v2/campaign/pause', { campaignId: campaign.id });
    expect(pausedPause.status).toBe(409);
    expect(pausedPause.body.error).toBe(
      'Campaign is not active (status: paused); only an active campaign can be paused.',
    );
  });

  it('reads completed when every contact of an active campaign has finished, and active again with a new contact', async () => {
    const ws = await t.createWorkspace();
    const { campaign } = await readyCampaign(t, ws);
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    const contact = (email: string, status: string) => ({
      id: newId(),
      workspace_id: ws.workspaceId,
      campaign_id: campaign.id,
      email,
      status,
      created_at: t.clock.now(),
      updated_at: t.clock.now(),
    });
    const statusOf = async () =>
      (await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId: campaign.id } } })).data!.data
        .status;
    await t
      .db('contacts')
      .insert([contact('a@x.io', 'completed'), contact('b@x.io', 'bounced'), contact('c@x.io', 'active')]);
    expect(await statusOf()).toBe('active');
    await t.db('contacts').where({ email: 'c@x.io' }).update({ status: 'unsubscribed' });
    expect(await statusOf()).toBe('completed');
    const listed = await ws.client.GET('/v1/campaign/list', { params: { query: { status: 'completed' } } });
    expect(listed.data!.data.items.map((x) => [x.id, x.status, x.counts.contacts])).toEqual([
      [campaign.id, 'completed', 3],
    ]);
    const active = await ws.client.GET('/v1/campaign/list', { params: { query: { status: 'active' } } });
    expect(active.data!.data.pagination.total).toBe(0);

    const pause = await raw(t, ws, 'POST', '/v2/campaign/pause', { campaignId: campaign.id });
    expect(pause.status).toBe(409);
    expect(pause.body.error).toBe('Campaign is not active (status: completed); only an active campaign can be paused.');
    const launch = await raw(t, ws, 'POST', '/v2/campaign/launch', { campaignId: campaign.id });
    expect(launch.status).toBe(409);
    expect(launch.body.error).toBe(
      'Campaign has completed: every contact has finished the sequence. Add contacts to resume it.',
    );

    await t.db('contacts').insert(contact('d@x.io', 'active'));
    expect(await statusOf()).toBe('active');
  });

  it('does not read completed while paused or without contacts', async () => {
    const ws = await t.createWorkspace();
    const { campaign } = await readyCampaign(t, ws);
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    const get = async () =>
      (await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId: campaign.id } } })).data!.data
        .status;
    expect(await get()).toBe('active');
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: campaign.id } });
    await t.db('contacts').insert({
      id: newId(),
      workspace_id: ws.workspaceId,
      campaign_id: campaign.id,
      email: 'a@x.io',
      status: 'completed',
      created_at: t.clock.now(),
      updated_at: t.clock.now(),
    });
    expect(await get()).toBe('paused');
  });

  it("answers 404 for another workspace's campaign and validates the body", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const { campaign } = await readyCampaign(t, other);
    for (const path of ['/v2/campaign/launch', '/v2/campaign/pause']) {
      const res = await raw(t, ws, 'POST', path, { campaignId: campaign.id });
      expect([path, res.status, res.body.error]).toEqual([path, 404, 'Campaign not found.']);
      const bad = await raw(t, ws, 'POST', path, { campaignId: campaign.id, force: true });
      expect(bad.status).toBe(400);
      expect(bad.body.details[0]).toMatchObject({ code: 'additionalProperties' });
    }
    const status = await other.client.GET('/v1/campaign/get/status', {
      params: { query: { campaignId: campaign.id } },
    });
    expect(status.data!.data.status).toBe('draft');
  });

  it('launch needs an active account, not just a linked one', async () => {
    const ws = await t.createWorkspace();
    const { campaign, accountId } = await readyCampaign(t, ws);
    await t.db('email_accounts').where({ id: accountId }).update({ status: 'sendingError' });
    const res = await raw(t, ws, 'POST', '/v2/campaign/launch', { campaignId: campaign.id });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('Campaign cannot be launched: no active email account linked.');
  });
});
