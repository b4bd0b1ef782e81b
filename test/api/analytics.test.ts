import { readJson, type ErrorBody, type Success } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import { recordMailEvents } from '../helpers/mail-events';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { secretKey: '11'.repeat(32) } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set('2026-11-23T10:00:00.000Z'));

const ZERO = { sent: 0, opened: 0, clicked: 0, replied: 0, bounced: 0, unsubscribed: 0 };

async function campaign(ws: TestWorkspace, status = 'active', name = 'Campaign'): Promise<string> {
  const id = newId();
  await t
    .db('campaigns')
    .insert({ id, workspace_id: ws.workspaceId, name, status, created_at: t.clock.now(), updated_at: t.clock.now() });
  return id;
}

async function contact(ws: TestWorkspace, campaignId: string, status = 'active'): Promise<string> {
  const id = newId();
  await t.db('contacts').insert({
    id,
    workspace_id: ws.workspaceId,
    campaign_id: campaignId,
    email: `${id}@lead.io`,
    status,
    created_at: t.clock.now(),
    updated_at: t.clock.now(),
  });
  return id;
}

async function account(ws: TestWorkspace, email: string): Promise<string> {
  const { data } = await ws.client.POST('/v2/account/connect', {
    body: { email, provider: 'google', smtp: { password: 'pw' }, dailyLimit: 10 },
  });
  return data!.data.account.id;
}

interface EventInput {
  type: string;
  at: string;
  campaignId?: string;
  contactId?: string;
  accountId?: string;
  warmup?: boolean;
}

const events = (ws: TestWorkspace, list: EventInput[]) => recordMailEvents(t, ws.workspaceId, list);

/** A GET's status and body; a test that reads into the body names what the status makes it (`raw<ErrorBody>`). */
async function raw<T = unknown>(ws: TestWorkspace, path: string) {
  const res = await t.fetch(path, { apiKey: ws.apiKey });
  return { status: res.status, body: await readJson<T>(res) };
}

describe('GET /v1/analytics/campaign/summary', () => {
  let ws: TestWorkspace;
  let c1: string;
  let c2: string;
  beforeAll(async () => {
    ws = await t.createWorkspace();
    c1 = await campaign(ws);
    c2 = await campaign(ws);
    const [k1, k2, k3] = [await contact(ws, c1), await contact(ws, c1), await contact(ws, c1)];
    const k4 = await contact(ws, c2);
    const on = (type: string, contactId: string, at: string, campaignId = c1) => ({ type, contactId, at, campaignId });
    await events(ws, [
      on('sent', k1, '2026-11-21T09:00:00Z'),
      on('sent', k2, '2026-11-21T10:00:00Z'),
      on('sent', k3, '2026-11-23T08:00:00Z'),
      on('opened', k1, '2026-11-21T11:00:00Z'),
      on('opened', k1, '2026-11-21T12:00:00Z'),
      on('opened', k1, '2026-11-23T00:00:00Z'),
      on('opened', k2, '2026-11-23T09:00:00Z'),
      on('clicked', k1, '2026-11-23T09:10:00Z'),
      on('replied', k2, '2026-11-23T09:20:00Z'),
      on('bounced', k3, '2026-11-23T08:01:00Z'),
      on('sent', k1, '2026-11-20T23:59:59Z'), // the day before the range
      { ...on('sent', k1, '2026-11-23T09:00:00Z'), warmup: true }, // warm-up traffic
      on('sent', k4, '2026-11-22T12:00:00Z', c2), // the other campaign
      on('unsubscribed', k4, '2026-11-22T13:00:00Z', c2),
    ]);
  });

  it('counts totals, contacts by their first event in the range, rates and a daily series with zero days', async () => {
    const { data, response } = await ws.client.GET('/v1/analytics/campaign/summary', {
      params: { query: { campaignId: c1, startDate: '2026-11-21', endDate: '2026-11-23' } },
    });
    expect(response.status).toBe(200);
    expect(data!.message).toBe('Campaign analytics retrieved');
    expect(data!.data).toEqual({
      campaignId: c1,
      startDate: '2026-11-21',
      endDate: '2026-11-23',
      timezone: 'UTC',
      totals: { sent: 3, opened: 4, clicked: 1, replied: 1, bounced: 1, unsubscribed: 0 },
      // k1 was first sent to the day before the range: a unique of that day, not of this range.
      unique: { sent: 2, opened: 2, clicked: 1, replied: 1, bounced: 1, unsubscribed: 0 },
      rates: { openRate: 100, clickRate: 50, replyRate: 50, bounceRate: 50, unsubscribeRate: 0 },
      graph: [
        { date: '2026-11-21', ...ZERO, sent: 2, opened: 2 },
        { date: '2026-11-22', ...ZERO },
        { date: '2026-11-23', sent: 1, opened: 2, clicked: 1, replied: 1, bounced: 1, unsubscribed: 0 },
      ],
    });
  });

  it('covers all campaigns of the workspace without campaignId', async () => {
    const { data } = await ws.client.GET('/v1/analytics/campaign/summary', {
      params: { query: { startDate: '2026-11-21', endDate: '2026-11-23' } },
    });
    expect(data!.data.campaignId).toBeNull();
    expect(data!.data.totals).toEqual({ sent: 4, opened: 4, clicked: 1, replied: 1, bounced: 1, unsubscribed: 1 });
    expect(data!.data.unique).toEqual({ sent: 3, opened: 2, clicked: 1, replied: 1, bounced: 1, unsubscribed: 1 });
    expect(data!.data.rates).toEqual({
      openRate: 66.67,
      clickRate: 33.33,
      replyRate: 33.33,
      bounceRate: 33.33,
      unsubscribeRate: 33.33,
    });
    expect(data!.data.graph[1]).toEqual({ date: '2026-11-22', ...ZERO, sent: 1, unsubscribed: 1 });
  });

  it('defaults to the 30 days ending today, every day present', async () => {
    const { data } = await ws.client.GET('/v1/analytics/campaign/summary', { params: { query: { campaignId: c1 } } });
    expect(data!.data.startDate).toBe('2026-10-25');
    expect(data!.data.endDate).toBe('2026-11-23');
    expect(data!.data.graph).toHaveLength(30);
    expect(data!.data.graph.map((d) => d.date).slice(-4)).toEqual([
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
      '2026-11-23',
    ]);
    expect(data!.data.graph[26]).toEqual({ date: '2026-11-20', ...ZERO, sent: 1 });
    expect(data!.data.totals.sent).toBe(4);
  });

  it('cuts days in the workspace time zone', async () => {
    const tz = await t.createWorkspace();
    await t.db('workspaces').where({ id: tz.workspaceId }).update({ timezone: 'America/New_York' });
    const c = await campaign(tz);
    const k = await contact(tz, c);
    await events(tz, [
      { type: 'sent', campaignId: c, contactId: k, at: '2026-11-23T04:59:59Z' }, // 2026-11-22 23:59:59 in New York
      { type: 'opened', campaignId: c, contactId: k, at: '2026-11-23T05:00:00Z' }, // 2026-11-23 00:00:00 in New York
    ]);
    t.clock.set('2026-11-23T04:59:00Z');
    const before = await tz.client.GET('/v1/analytics/campaign/summary', {
      params: { query: { campaignId: c, startDate: '2026-11-22' } },
    });
    expect(before.data!.data).toMatchObject({ endDate: '2026-11-22', timezone: 'America/New_York' });
    expect(before.data!.data.graph).toEqual([{ date: '2026-11-22', ...ZERO, sent: 1 }]);

    t.clock.set('2026-11-23T05:00:00Z');
    const after = await tz.client.GET('/v1/analytics/campaign/summary', {
      params: { query: { campaignId: c, startDate: '2026-11-22' } },
    });
    expect(after.data!.data.graph).toEqual([
      { date: '2026-11-22', ...ZERO, sent: 1 },
      { date: '2026-11-23', ...ZERO, opened: 1 },
    ]);
  });

  it('rejects reversed, too long and malformed ranges (v1 and v2 bodies)', async () => {
    const reversed = await raw(ws, `/v1/analytics/campaign/summary?startDate=2026-11-23&endDate=2026-11-22`);
    expect(reversed).toEqual({ status: 400, body: { error: 'startDate must not be after endDate.' } });
    const reversedV2 = await raw(ws, `/v2/analytics/campaign/summary?startDate=2026-11-23&endDate=2026-11-22`);
    expect(reversedV2.body).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'query.startDate', location: 'query', code: 'range' }],
    });
    const long = await raw(ws, `/v1/analytics/campaign/summary?startDate=2025-11-22&endDate=2026-11-23`);
    expect(long).toEqual({ status: 400, body: { error: 'The date range may span at most 366 days.' } });
    const fullYear = await raw<Success<'/v1/analytics/campaign/summary', 'get'>>(
      ws,
      `/v1/analytics/campaign/summary?startDate=2025-11-23&endDate=2026-11-23`,
    );
    expect(fullYear.status).toBe(200);
    expect(fullYear.body.data.graph).toHaveLength(366);
    for (const day of ['2026-13-01', '2026-02-30', 'yesterday']) {
      const malformed = await raw<ErrorBody>(ws, `/v2/analytics/campaign/summary?startDate=${day}`);
      expect(malformed.status).toBe(400);
      expect(malformed.body.details[0]).toMatchObject({ field: 'query.startDate', code: 'format' });
    }
    expect(await raw(ws, '/v1/analytics/campaign/summary?endDate=2026-02-29')).toEqual({
      status: 400,
      body: { error: 'endDate is not a calendar date: 2026-02-29.' },
    });
    const unknownParam = await raw(ws, `/v1/analytics/campaign/summary?from=2026-11-01`);
    expect(unknownParam.status).toBe(400);
  });

  it("answers 404 for another workspace's or an unknown campaign", async () => {
    const other = await t.createWorkspace();
    for (const id of [c1, newId()]) {
      expect(await raw(other, `/v1/analytics/campaign/summary?campaignId=${id}`)).toEqual({
        status: 404,
        body: { error: 'Campaign not found.' },
      });
    }
    const v2 = await raw(other, `/v2/analytics/campaign/summary?campaignId=${c1}`);
    expect(v2.body).toMatchObject({ error: 'Campaign not found.', code: 'not_found', statusCode: 404 });
  });
});

describe('GET /v1/analytics/campaign/count', () => {
  it('counts campaigns by status, contacts by status, events and unique contacts', async () => {
    const ws = await t.createWorkspace();
    await campaign(ws, 'draft');
    await campaign(ws, 'paused');
    const running = await campaign(ws, 'active');
    const finished = await campaign(ws, 'active');
    await campaign(ws, 'active'); // active without contacts stays active
    const r1 = await contact(ws, running, 'active');
    const r2 = await contact(ws, running, 'bounced');
    await contact(ws, running, 'paused');
    const f1 = await contact(ws, finished, 'completed');
    await contact(ws, finished, 'unsubscribed');
    await events(ws, [
      { type: 'sent', campaignId: running, contactId: r1, at: '2026-01-05T10:00:00Z' },
      { type: 'sent', campaignId: running, contactId: r1, at: '2026-01-08T10:00:00Z' },
      { type: 'sent', campaignId: running, contactId: r2, at: '2026-01-05T10:00:00Z' },
      { type: 'bounced', campaignId: running, contactId: r2, at: '2026-01-05T10:01:00Z' },
      { type: 'opened', campaignId: running, contactId: r1, at: '2026-01-05T11:00:00Z' },
      { type: 'opened', campaignId: running, contactId: r1, at: '2026-01-06T11:00:00Z' },
      { type: 'sent', campaignId: finished, contactId: f1, at: '2025-06-01T10:00:00Z' },
      { type: 'replied', campaignId: finished, contactId: f1, at: '2025-06-02T10:00:00Z' },
      { type: 'sent', campaignId: running, contactId: r1, at: '2026-01-05T10:00:00Z', warmup: true },
    ]);

    const all = await ws.client.GET('/v1/analytics/campaign/count');
    expect(all.data!.message).toBe('Campaign counts retrieved');
    expect(all.data!.data).toEqual({
      campaignId: null,
      campaigns: { total: 5, draft: 1, active: 2, paused: 1, completed: 1 },
      contacts: { total: 5, active: 1, paused: 1, completed: 1, bounced: 1, unsubscribed: 1 },
      emails: { ...ZERO, sent: 4, opened: 2, replied: 1, bounced: 1 },
      uniqueContacts: { ...ZERO, sent: 3, opened: 1, replied: 1, bounced: 1 },
    });

    const one = await ws.client.GET('/v1/analytics/campaign/count', { params: { query: { campaignId: finished } } });
    expect(one.data!.data).toEqual({
      campaignId: finished,
      campaigns: { total: 1, draft: 0, active: 0, paused: 0, completed: 1 },
      contacts: { total: 2, active: 0, paused: 0, completed: 1, bounced: 0, unsubscribed: 1 },
      emails: { ...ZERO, sent: 1, replied: 1 },
      uniqueContacts: { ...ZERO, sent: 1, replied: 1 },
    });

    const empty = await (await t.createWorkspace()).client.GET('/v1/analytics/campaign/count');
    expect(empty.data!.data.campaigns.total).toBe(0);
    expect(empty.data!.data.emails).toEqual(ZERO);

    const other = await t.createWorkspace();
    expect(await raw(other, `/v1/analytics/campaign/count?campaignId=${running}`)).toEqual({
      status: 404,
      body: { error: 'Campaign not found.' },
    });
    const bad = await raw<ErrorBody>(other, '/v2/analytics/campaign/count?campaignId=42');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ field: 'query.campaignId', code: 'format' });
  });
});

describe('GET /v1/analytics/account/campaign/count', () => {
  it("counts today's campaign and warm-up sends per account in the workspace time zone", async () => {
    const ws = await t.createWorkspace();
    await t.db('workspaces').where({ id: ws.workspaceId }).update({ timezone: 'Asia/Tokyo' });
    const a = await account(ws, 'a@acme.io');
    const b = await account(ws, 'b@acme.io');
    // Clock: 2026-11-23T10:00Z = 19:00 on the 23rd in Tokyo; the Tokyo day began at 2026-11-22T15:00Z.
    await events(ws, [
      { type: 'sent', accountId: a, at: '2026-11-22T14:59:59Z' }, // 23:59:59 on the 22nd in Tokyo
      { type: 'sent', accountId: a, at: '2026-11-22T15:00:00Z' },
      { type: 'sent', accountId: a, at: '2026-11-23T09:00:00Z' },
      { type: 'opened', accountId: a, at: '2026-11-23T09:40:00Z' },
      { type: 'sent', accountId: b, at: '2026-11-22T12:00:00Z' },
    ]);
    // A warm-up email of the pool's record (the warm-up tests send real ones).
    const warm = newId();
    await t.db('warmup_messages').insert({
      id: warm,
      message_id: `${warm}@acme.io`,
      kind: 'first',
      sender_id: a,
      recipient_id: b,
      sender_email: 'a@acme.io',
      recipient_email: 'b@acme.io',
      subject: 'Hello',
      text: 'Hi',
      status: 'sent',
      send_at: new Date('2026-11-23T09:30:00Z'),
      sent_at: new Date('2026-11-23T09:30:00Z'),
      created_at: new Date('2026-11-23T09:30:00Z'),
    });
    await t.db('email_accounts').where({ id: a }).update({ daily_limit: 3 });
    const { data } = await ws.client.GET('/v1/analytics/account/campaign/count');
    expect(data!.data).toEqual({
      date: '2026-11-23',
      timezone: 'Asia/Tokyo',
      items: [
        // Warm-up and campaign mail share the daily limit.
        {
          accountId: a,
          email: 'a@acme.io',
          status: 'active',
          dailyLimit: 3,
          sentToday: 2,
          remainingToday: 0,
          warmupSentToday: 1,
        },
        {
          accountId: b,
          email: 'b@acme.io',
          status: 'active',
          dailyLimit: 10,
          sentToday: 0,
          remainingToday: 10,
          warmupSentToday: 0,
        },
      ],
      pagination: { limit: 20, skip: 0, total: 2, hasMore: false },
    });

    const onlyB = await ws.client.GET('/v1/analytics/account/campaign/count', { params: { query: { accountId: b } } });
    expect(onlyB.data!.data.items.map((i) => i.accountId)).toEqual([b]);
    const page = await ws.client.GET('/v1/analytics/account/campaign/count', {
      params: { query: { limit: 1, skip: 1 } },
    });
    expect(page.data!.data.items.map((i) => i.accountId)).toEqual([b]);
    expect(page.data!.data.pagination).toEqual({ limit: 1, skip: 1, total: 2, hasMore: false });

    // At 15:00Z the Tokyo day turns: yesterday's sends no longer count.
    t.clock.set('2026-11-23T15:00:00Z');
    const tomorrow = await ws.client.GET('/v1/analytics/account/campaign/count', {
      params: { query: { accountId: a } },
    });
    expect(tomorrow.data!.data.date).toBe('2026-11-24');
    expect(tomorrow.data!.data.items[0]).toMatchObject({ sentToday: 0, warmupSentToday: 0, remainingToday: 3 });
  });

  it("answers 404 for another workspace's account and 400 for a bad limit", async () => {
    const ws = await t.createWorkspace();
    const theirs = await account(await t.createWorkspace(), 'y@acme.io');
    expect(await raw(ws, `/v1/analytics/account/campaign/count?accountId=${theirs}`)).toEqual({
      status: 404,
      body: { error: 'Email account not found.' },
    });
    const bad = await raw<ErrorBody>(ws, '/v2/analytics/account/campaign/count?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ field: 'query.limit', code: 'minimum' });
  });
});
