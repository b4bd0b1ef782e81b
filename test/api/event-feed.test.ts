/**
 * The event feed through HTTP: the same ids and payloads as webhook deliveries, in order, a cursor that
 * pages, polls and filters without skipping or repeating, bad cursors, other workspaces, retention, and
 * (PostgreSQL) a reader that never skips an event while this process and a second one write concurrently.
 */
import { readJson, type ErrorBody, type Success } from '../helpers/bodies';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import type { Event, EventInput } from '../../server/modules/events/service';
import { describeIf } from '../helpers/binaries';

const onPostgres = describeIf(
  process.env.TEST_DATABASE_URL,
  'PostgreSQL: several processes share one database',
  'TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
);

async function record(t: TestServer, ...inputs: EventInput[]): Promise<Event[]> {
  return t.db.transaction(async (trx) => {
    const out: Event[] = [];
    for (const input of inputs) out.push(await t.services.events.record(trx, input));
    return out;
  });
}

describe('event feed', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let campaignId: string;
  beforeAll(async () => {
    t = await startTestServer({
      config: { allowPrivateWebhooks: true, secretKey: '44'.repeat(32), eventRetentionDays: 7 },
    });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    campaignId = (await ws.client.POST('/v2/campaign/create', { body: { name: 'Feed' } })).data!.data.campaign.id;
  });
  afterAll(() => t.close());

  const feed = (
    w: TestWorkspace,
    query: { after?: string; types?: Event['type'][]; campaignId?: string; limit?: number } = {},
  ) => w.client.GET('/v2/event/list', { params: { query } });

  it('lists what webhooks receive, with the same ids and bodies, oldest first, and pages with the cursor', async () => {
    await ws.client.POST('/v2/webhook/create', {
      body: {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['campaign.launched', 'contact.leadStatusChanged', 'email.sent'],
      },
    });
    const contact = (
      await ws.client.POST('/v2/contact/add', { body: { campaignId, contacts: [{ email: 'ann@globex.example' }] } })
    ).data!.data.added[0];
    await ws.client.POST('/v2/contact/update/status', { body: { contactId: contact.id, leadStatus: 'interested' } });
    const recorded = await record(
      t,
      {
        workspaceId: ws.workspaceId,
        type: 'email.sent',
        data: { campaignId, contactId: contact.id, email: contact.email, messageId: null },
        mail: { campaignId, contactId: contact.id },
      },
      {
        workspaceId: ws.workspaceId,
        type: 'contact.leadStatusChanged',
        data: { campaignId, contactId: contact.id, email: contact.email, previous: 'interested', leadStatus: 'closed' },
      },
    );
    const all = await feed(ws, { limit: 100 });
    expect(all.response.status).toBe(200);
    const items = all.data!.data.items;
    expect(items.map((e) => e.type)).toEqual(['contact.leadStatusChanged', 'email.sent', 'contact.leadStatusChanged']);
    expect(items.slice(1).map((e) => e.id)).toEqual(recorded.map((e) => e.id));
    const deliveries = await t
      .db('webhook_deliveries')
      .where({ workspace_id: ws.workspaceId })
      .select<{ event_id: string; payload: string }[]>('event_id', 'payload');
    expect(deliveries).toHaveLength(3);
    for (const d of deliveries) expect(items.find((e) => e.id === d.event_id)).toEqual(JSON.parse(d.payload));
    expect(all.data!.data.pagination).toEqual({ limit: 100, nextCursor: 'ev1.3', hasMore: false });

    // Paging two at a time gives the same events once each.
    const first = await feed(ws, { limit: 2 });
    expect(first.data!.data.pagination).toEqual({ limit: 2, nextCursor: 'ev1.2', hasMore: true });
    const second = await feed(ws, { limit: 2, after: first.data!.data.pagination.nextCursor });
    expect([...first.data!.data.items, ...second.data!.data.items]).toEqual(items);
    expect(second.data!.data.pagination).toEqual({ limit: 2, nextCursor: 'ev1.3', hasMore: false });
    // Polling with the cursor answers nothing until something happens, then only that.
    const idle = await feed(ws, { after: 'ev1.3' });
    expect(idle.data!.data).toEqual({ items: [], pagination: { limit: 20, nextCursor: 'ev1.3', hasMore: false } });
    const [later] = await record(t, {
      workspaceId: ws.workspaceId,
      type: 'campaign.paused',
      data: { campaignId, name: 'Feed' },
    });
    expect((await feed(ws, { after: 'ev1.3' })).data!.data.items).toEqual([later]);
  });

  it('filters by type and campaign, and the cursor moves past what the filters leave out', async () => {
    const before = (await feed(ws, { limit: 100 })).data!.data.pagination.nextCursor;
    const other = (await ws.client.POST('/v2/campaign/create', { body: { name: 'Other' } })).data!.data.campaign.id;
    const [a, , c] = await record(
      t,
      { workspaceId: ws.workspaceId, type: 'campaign.launched', data: { campaignId, name: 'Feed' } },
      { workspaceId: ws.workspaceId, type: 'campaign.launched', data: { campaignId: other, name: 'Other' } },
      { workspaceId: ws.workspaceId, type: 'campaign.completed', data: { campaignId, name: 'Feed' } },
    );
    const launched = await feed(ws, { after: before, types: ['campaign.launched', 'campaign.completed'], campaignId });
    expect(launched.data!.data.items.map((e) => e.id)).toEqual([a.id, c.id]);
    const onlyLaunched = await feed(ws, { after: before, types: ['campaign.launched'], campaignId });
    expect(onlyLaunched.data!.data.items.map((e) => e.id)).toEqual([a.id]);
    // The page reached the newest event: the cursor is past c, which the filter left out.
    expect(onlyLaunched.data!.data.pagination.nextCursor).toBe(launched.data!.data.pagination.nextCursor);
    expect((await feed(ws, { after: onlyLaunched.data!.data.pagination.nextCursor })).data!.data.items).toEqual([]);
    const raw = await t.fetch(
      `/v2/event/list?types=campaign.launched,campaign.completed&campaignId=${campaignId}&after=${before}`,
      { apiKey: ws.apiKey },
    );
    expect((await readJson<Success<'/v2/event/list', 'get'>>(raw)).data.items).toHaveLength(2);
  });

  it('answers 400 for a cursor it did not give and for unknown types, and shows nothing of another workspace', async () => {
    for (const after of ['abc', 'ev1.', 'ev1.-1', 'ev2.1', 'ev1.01', 'ev1.999999']) {
      const res = await t.fetch(`/v2/event/list?after=${after}`, { apiKey: ws.apiKey });
      expect([after, res.status]).toEqual([after, 400]);
      expect((await readJson<ErrorBody>(res)).details[0].field).toMatch(/after/);
    }
    expect((await t.fetch('/v2/event/list?types=email.nope', { apiKey: ws.apiKey })).status).toBe(400);
    expect((await t.fetch('/v2/event/list?limit=101', { apiKey: ws.apiKey })).status).toBe(400);
    const other = await t.createWorkspace();
    expect((await feed(other)).data!.data).toEqual({
      items: [],
      pagination: { limit: 20, nextCursor: 'ev1.0', hasMore: false },
    });
    // A cursor of this workspace is ahead of the other's feed.
    expect((await t.fetch('/v2/event/list?after=ev1.2', { apiKey: other.apiKey })).status).toBe(400);
  });

  it('keeps events for EVENT_RETENTION_DAYS: the worker job deletes older ones', async () => {
    const w = await t.createWorkspace();
    await record(t, { workspaceId: w.workspaceId, type: 'campaign.paused', data: { campaignId, name: 'old' } });
    t.clock.advance(6 * 86_400_000);
    const [recent] = await record(t, {
      workspaceId: w.workspaceId,
      type: 'campaign.paused',
      data: { campaignId, name: 'recent' },
    });
    t.clock.advance(86_400_000 + 1000);
    expect(await t.services.events.retention.runOnce()).toBeGreaterThanOrEqual(1);
    expect(await t.services.events.retention.runOnce()).toBe(0);
    const left = await feed(w);
    expect(left.data!.data.items).toEqual([recent]);
    // A cursor from before the deleted events goes on with the oldest kept.
    expect((await feed(w, { after: 'ev1.0' })).data!.data.pagination.nextCursor).toBe('ev1.2');
  });
});

onPostgres('event feed under concurrent writers (two processes)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('never skips nor repeats an event while this process and another commit out of order', async () => {
    const ws = await t.createWorkspace();
    const PER_WRITER = 300;
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../helpers/event-writer.ts')], {
      env: {
        ...process.env,
        DATABASE_URL: t.databaseUrl,
        WORKSPACE_ID: ws.workspaceId,
        EVENTS: String(PER_WRITER),
        CONCURRENCY: '4',
        NODE_OPTIONS: '',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const childDone = new Promise<string[]>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`writer exited with ${code}`)),
      ),
    );

    const local: string[] = [];
    let next = 0;
    const lane = async () => {
      while (next < PER_WRITER) {
        const i = next++;
        local.push(
          await t.db.transaction(async (trx) => {
            const e = await t.services.events.record(trx, {
              workspaceId: ws.workspaceId,
              type: 'contact.leadStatusChanged',
              data: { writer: 'test', i },
            });
            await trx.raw('SELECT pg_sleep(random() * 0.01)');
            return e.id;
          }),
        );
      }
    };
    let writing = true;
    const writers = Promise.all([childDone, Promise.all(Array.from({ length: 4 }, lane))]).finally(
      () => (writing = false),
    );

    const seen: string[] = [];
    let cursor: string | undefined;
    let reads = 0;
    const read = async () => {
      const page = await ws.client.GET('/v2/event/list', { params: { query: { after: cursor, limit: 50 } } });
      expect(page.response.status).toBe(200);
      seen.push(...page.data!.data.items.map((e) => e.id));
      cursor = page.data!.data.pagination.nextCursor;
      reads += 1;
      return page.data!.data.pagination.hasMore;
    };
    while (writing) await read();
    const [remote] = await writers;
    while (await read());

    const written = [...remote, ...local];
    expect(written).toHaveLength(2 * PER_WRITER);
    expect(seen).toHaveLength(written.length);
    expect(new Set(seen)).toEqual(new Set(written));
    expect(reads).toBeGreaterThan(5);
    // Commits overtook one another: in insertion (id) order the events are not in feed order, so a reader
    // paging by an id or a sequence taken at insert would have skipped some.
    const rows = await t
      .db('events')
      .where({ workspace_id: ws.workspaceId })
      .orderBy('position')
      .select<{ id: string; position: string | number }[]>('id', 'position');
    expect(rows.map((r) => Number(r.position))).toEqual(rows.map((_, i) => i + 1));
    const byId = [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(byId.some((r, i) => i > 0 && Number(r.position) < Number(byId[i - 1].position))).toBe(true);
  }, 120_000);
});
