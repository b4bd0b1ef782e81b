/**
 * Migration 20261202010000 fills email_rollup_days (a row per campaign and day) from the rollups
 * kept before it: a database at the migration before, events and their rollups written as the code before it
 * left them, then the latest schema and the summaries through HTTP; `down` drops the table.
 */
import { expect, it, afterAll } from '@jest/globals';
import { rebuildRollups as rebuildBefore } from '../../server/db/migrations/20261127010000_create_email_rollups';
import { oldWorkspace } from '../helpers/old-workspace';
import { databaseBefore, startTestServer, type TestServer } from '../helpers/server';

const DAYS = '20261202010000_create_email_rollup_days';
const ZERO = { sent: 0, opened: 0, clicked: 0, replied: 0, bounced: 0, unsubscribed: 0 };

let t: TestServer;
afterAll(() => t?.close());

it('fills the day rows of every workspace and campaign from the rollups stored before it', async () => {
  const database = await databaseBefore(DAYS);
  const { db } = database;
  expect(await db.schema.hasTable('email_rollup_days')).toBe(false);

  const { workspaceId, campaignId, k1, k2, event } = await oldWorkspace(db);
  await db('email_events').insert([
    event('sent', k1, '2026-11-19T18:29:59Z'), // 23:59:59 on the 19th in Kolkata
    event('sent', k2, '2026-11-19T18:30:00Z'), // 00:00 on the 20th
    event('sent', k1, '2026-11-20T09:00:00Z'),
    event('opened', k1, '2026-11-20T09:01:00Z', { flagged: true }), // a scanner: not unique
    event('opened', k1, '2026-11-20T11:00:00Z'),
    event('replied', k2, '2026-11-20T13:00:00Z'),
    event('autoReplied', k2, '2026-11-20T13:05:00Z'), // not a summary type
    event('sent', k1, '2026-11-20T09:00:00Z', { is_warmup: true }), // warm-up: not in a summary
    event('opened', null, '2026-11-20T14:00:00Z', { campaign_id: null }), // the workspace's only
  ]);
  await rebuildBefore(db);

  t = await startTestServer({ database });
  t.clock.set('2026-11-20T15:00:00Z');
  const client = t.client((await t.services.workspaces.createKey(workspaceId)).apiKey);
  const summary = async (campaign: string | undefined) => {
    const res = await client.GET('/v1/analytics/campaign/summary', {
      params: { query: { campaignId: campaign, startDate: '2026-11-19', endDate: '2026-11-20' } },
    });
    return res.data!.data;
  };

  const ofCampaign = await summary(campaignId);
  expect(ofCampaign.totals).toEqual({ ...ZERO, sent: 3, opened: 2, replied: 1 });
  // k1 and k2 first sent to on the 19th and the 20th; k1's unflagged open; k2's reply.
  expect(ofCampaign.unique).toEqual({ ...ZERO, sent: 2, opened: 1, replied: 1 });
  expect(ofCampaign.graph).toEqual([
    { date: '2026-11-19', ...ZERO, sent: 1 },
    { date: '2026-11-20', ...ZERO, sent: 2, opened: 2, replied: 1 },
  ]);
  const ofWorkspace = await summary(undefined);
  expect(ofWorkspace.totals).toEqual({ ...ZERO, sent: 3, opened: 3, replied: 1 });
  expect(ofWorkspace.graph[1]).toEqual({ date: '2026-11-20', ...ZERO, sent: 2, opened: 3, replied: 1 });

  await t.db.migrate.down({ name: DAYS });
  expect(await t.db.schema.hasTable('email_rollup_days')).toBe(false);
  await t.db.migrate.up({ name: DAYS });
  expect(await summary(campaignId)).toEqual(ofCampaign);
}, 180_000); // every migration one by one, then a server
