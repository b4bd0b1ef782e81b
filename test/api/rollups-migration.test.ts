/**
 * Migration 20261127010000 builds the analytics rollups from the events stored before it: a database at
 * the migration before, events written the old way (straight into email_events), then the latest schema
 * and the answers through HTTP.
 */
import { oldWorkspace } from '../helpers/old-workspace';
import { databaseBefore, startTestServer, type TestServer } from '../helpers/server';

const ROLLUPS = '20261127010000_create_email_rollups';
const ZERO = { sent: 0, opened: 0, clicked: 0, replied: 0, bounced: 0, unsubscribed: 0 };

let t: TestServer;
afterAll(() => t?.close());

it('builds the rollups from the events stored before it, on the workspace time zone of today', async () => {
  const database = await databaseBefore(ROLLUPS);
  const { db } = database;
  expect(await db.schema.hasTable('email_rollups')).toBe(false);

  const { workspaceId, campaignId, k1, k2, event } = await oldWorkspace(db);
  await db('email_events').insert([
    event('sent', k1, '2026-11-19T18:29:59Z'), // 23:59:59 on the 19th in Kolkata
    event('sent', k2, '2026-11-19T18:30:00Z'), // 00:00 on the 20th
    event('sent', k1, '2026-11-20T09:00:00Z'),
    event('opened', k1, '2026-11-20T09:01:00Z', { flagged: true }), // a scanner: not unique
    event('opened', k1, '2026-11-20T11:00:00Z'),
    event('opened', k1, '2026-11-20T12:00:00Z'),
    event('replied', k2, '2026-11-20T13:00:00Z'),
    event('sent', k1, '2026-11-20T09:00:00Z', { is_warmup: true }),
  ]);

  t = await startTestServer({ database });
  t.clock.set('2026-11-20T15:00:00Z');
  const client = t.client((await t.services.workspaces.createKey(workspaceId)).apiKey);

  const count = await client.GET('/v1/analytics/campaign/count', { params: { query: { campaignId } } });
  expect(count.data!.data.emails).toEqual({ ...ZERO, sent: 3, opened: 3, replied: 1 });
  expect(count.data!.data.uniqueContacts).toEqual({ ...ZERO, sent: 2, opened: 1, replied: 1 });

  const summary = await client.GET('/v1/analytics/campaign/summary', {
    params: { query: { startDate: '2026-11-20', endDate: '2026-11-20' } },
  });
  expect(summary.data!.data).toMatchObject({
    timezone: 'Asia/Kolkata',
    totals: { ...ZERO, sent: 2, opened: 3, replied: 1 },
    // k1 was first sent to on the 19th (Kolkata): a unique of that day.
    unique: { ...ZERO, sent: 1, opened: 1, replied: 1 },
  });
  const before = await client.GET('/v1/analytics/campaign/summary', {
    params: { query: { startDate: '2026-11-19', endDate: '2026-11-19' } },
  });
  expect(before.data!.data.graph).toEqual([{ date: '2026-11-19', ...ZERO, sent: 1 }]);
}, 180_000); // every migration one by one, then a server
