/**
 * The audit log through HTTP: every state-changing operation of the spec leaves an entry (the contract
 * entries' successful calls, walked one by one), entries hold field names and never values, filters and
 * the cursor, another workspace sees none of them, entries cannot be updated, and the retention drops
 * whole months.
 */
import { entries } from '../contract/entries';
import { startFixture, type Fixture } from '../contract/fixture';
import { operations } from '../contract/openapi';
import { AuditService } from '../../server/modules/audit/service';
import { AuditStore } from '../../server/modules/audit/store';
import { TestClock } from '../helpers/clock';

jest.setTimeout(600_000);

let f: Fixture;
beforeAll(async () => {
  f = await startFixture();
}, 120_000);
afterAll(() => f?.close());

/** The state-changing operations as written (a /v2 alias runs the same handler as its /v1 original). */
const changing = operations.filter((o) => o.method !== 'get' && entries[o.key]);

async function entriesOf(operation: string) {
  const r = await f.c.GET('/v2/audit/list', { params: { query: { operation, limit: 100 } } });
  if (!r.data) throw new Error(`audit/list: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data.data.items;
}

it('every state-changing operation of the spec leaves an entry with its key, operation and outcome', async () => {
  expect(changing.length).toBeGreaterThan(50);
  const missing: string[] = [];
  for (const o of changing) {
    const answer = await entries[o.key].ok(f, o.path.startsWith('/v2/') ? 'v2' : 'v1');
    const recorded = await entriesOf(o.operationId);
    const own = recorded.find((e) => e.requestId === answer.response.headers.get('x-request-id'));
    if (!own) missing.push(o.key);
    else expect(own).toMatchObject({ actor: 'key', keyId: f.ws.keyId, outcome: answer.response.status });
  }
  expect(missing).toEqual([]);
});

it('records field names, never values, and refusals with their status', async () => {
  await f.c.POST('/v2/account/connect', {
    body: {
      email: 'audited@acme-mail.io',
      provider: 'smtp',
      smtp: { host: '127.0.0.1', port: 2525, password: 'hunter2-secret' },
    },
  });
  const [connect] = await entriesOf('connectAccount');
  expect(connect.fields).toEqual(expect.arrayContaining(['email', 'provider', 'smtp']));
  const all = await f.c.GET('/v2/audit/list', { params: { query: { limit: 100 } } });
  expect(JSON.stringify(all.data)).not.toContain('hunter2-secret');

  const missing = '0192f0c4-0000-7000-8000-00000000abcd';
  await f.c.POST('/v2/webhook/delete', { body: { id: missing } });
  const byTarget = await f.c.GET('/v2/audit/list', { params: { query: { targetId: missing } } });
  expect(byTarget.data!.data.items).toMatchObject([{ operation: 'deleteWebhook', targetIds: [missing], outcome: 404 }]);
});

it('filters by key and time, pages by cursor, and shows another workspace nothing', async () => {
  const byKey = await f.c.GET('/v2/audit/list', { params: { query: { keyId: f.ws.keyId, limit: 2 } } });
  const page = byKey.data!.data;
  expect(page.items).toHaveLength(2);
  expect(page.pagination.hasMore).toBe(true);
  const next = await f.c.GET('/v2/audit/list', {
    params: { query: { keyId: f.ws.keyId, limit: 2, cursor: page.pagination.nextCursor! } },
  });
  expect(next.data!.data.items[0].id < page.items[1].id).toBe(true);

  const future = new Date(f.t.clock.now().getTime() + 86_400_000).toISOString();
  const none = await f.c.GET('/v2/audit/list', { params: { query: { from: future } } });
  expect(none.data!.data.items).toEqual([]);
  const backwards = await f.c.GET('/v2/audit/list', { params: { query: { from: future, to: future } } });
  expect(backwards.response.status).toBe(400);

  const others = await f.otherC.GET('/v2/audit/list', { params: { query: { keyId: f.ws.keyId } } });
  expect(others.data!.data.items).toEqual([]);
});

it('is append-only, and the retention drops the months before it whole', async () => {
  await f.c.POST('/v2/webhook/delete', { body: { id: '0192f0c4-0000-7000-8000-00000000abce' } });
  await expect(f.t.db('audit_entries').update({ status: 200 })).rejects.toThrow(/append-only/);

  const clock = new TestClock('2026-12-16T10:00:00.000Z');
  const audit = new AuditService({ db: f.t.db, store: new AuditStore(), clock, retentionMonths: 1 });
  const at = (iso: string) => {
    clock.set(new Date(iso));
    return audit.record({
      workspaceId: f.other.workspaceId,
      actor: 'key',
      keyId: f.other.keyId,
      keyName: null,
      operation: 'createCampaign',
      targetIds: [],
      fields: ['name'],
      address: '127.0.0.1',
      status: 201,
      requestId: iso,
    });
  };
  await at('2026-10-31T23:59:59.000Z');
  await at('2026-11-01T00:00:00.000Z');
  await at('2026-12-16T10:00:00.000Z');
  expect(await audit.retention.runOnce()).toBeGreaterThanOrEqual(1);
  const kept = await f.otherC.GET('/v2/audit/list', { params: { query: { operation: 'createCampaign', limit: 100 } } });
  const ids = kept.data!.data.items.map((e) => e.requestId);
  expect(ids).toEqual(expect.arrayContaining(['2026-12-16T10:00:00.000Z', '2026-11-01T00:00:00.000Z']));
  expect(ids).not.toContain('2026-10-31T23:59:59.000Z');
});
