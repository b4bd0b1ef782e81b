/**
 * The rollups answer exactly what counting the raw events answers: a seeded random set of events (out of
 * order, flagged, warm-up, without contact or campaign) recorded through `record`, then every analytics
 * answer compared with a count over email_events, for several ranges and time zones, and the rollups
 * kept by `record` (the day rows included) compared with a rebuild from email_events.
 */
import type { RawResult } from '../../server/db';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import { rebuildRollups } from '../../server/modules/events/rollups';
import { addDays } from '../../server/time/days';
import { recordMailEvents, type MailEventInput } from '../helpers/mail-events';

// Hundreds of events recorded one by one, and every answer compared in several zones: minutes on a busy machine.
jest.setTimeout(300_000);

let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
});
afterAll(() => t.close());

/** mulberry32: the same events on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const TYPES = [
  'sent',
  'sent',
  'sent',
  'opened',
  'opened',
  'clicked',
  'replied',
  'autoReplied',
  'bounced',
  'unsubscribed',
];
const COUNTED = ['sent', 'opened', 'clicked', 'replied', 'bounced', 'unsubscribed'];
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Chatham'];
const RANGES: [string, string][] = [
  ['2026-10-30', '2026-11-22'],
  ['2026-11-05', '2026-11-12'],
  ['2026-11-09', '2026-11-09'],
];

interface Layout {
  campaignId: string;
  steps: { stepId: string; variantIds: string[] }[];
  contactIds: string[];
}

async function layout(name: string): Promise<Layout> {
  const now = t.clock.now();
  const campaignId = newId();
  await t
    .db('campaigns')
    .insert({ id: campaignId, workspace_id: ws.workspaceId, name, status: 'active', created_at: now, updated_at: now });
  const steps: Layout['steps'] = [];
  for (const order of [1, 2]) {
    const stepId = newId();
    await t.db('campaign_steps').insert({
      id: stepId,
      workspace_id: ws.workspaceId,
      campaign_id: campaignId,
      step_order: order,
      created_at: now,
    });
    const variantIds = [newId(), newId()];
    await t.db('step_variants').insert(
      variantIds.map((id, i) => ({
        id,
        workspace_id: ws.workspaceId,
        campaign_id: campaignId,
        step_id: stepId,
        label: 'AB'[i],
        body: 'Hi',
        weight: 1,
        created_at: now,
      })),
    );
    steps.push({ stepId, variantIds });
  }
  const contactIds = Array.from({ length: 8 }, () => newId());
  await t.db('contacts').insert(
    contactIds.map((id) => ({
      id,
      workspace_id: ws.workspaceId,
      campaign_id: campaignId,
      email: `${id}@lead.io`,
      status: 'active',
      created_at: now,
      updated_at: now,
    })),
  );
  return { campaignId, steps, contactIds };
}

/** A count of one event type, as the reference queries below answer it. */
interface TypeCount {
  type: string;
  n: number;
}

/** A raw count over email_events of this workspace, campaign traffic only, the reference answer. */
async function rawCounts(where: Record<string, string>, from: Date | null, to: Date | null, types: string[] = COUNTED) {
  const inRange = (column: string) => (from ? `AND ${column} >= ? AND ${column} < ?` : '');
  const bounds = from ? [from, to] : [];
  const filter = Object.keys(where)
    .map((c) => `AND ${c} = ?`)
    .join(' ');
  const base = [ws.workspaceId, ...Object.values(where)];
  const totals = (
    await t.db.raw<RawResult<TypeCount>>(
      `SELECT type, count(*)::int AS n FROM email_events WHERE workspace_id = ? AND NOT is_warmup ${filter} ${inRange('occurred_at')} GROUP BY type`,
      [...base, ...bounds],
    )
  ).rows;
  const unique = (
    await t.db.raw<RawResult<TypeCount>>(
      `SELECT type, count(*)::int AS n FROM (
         SELECT type, contact_id, min(occurred_at) AS first_at FROM email_events
          WHERE workspace_id = ? AND NOT is_warmup AND NOT flagged AND contact_id IS NOT NULL ${filter}
          GROUP BY type, contact_id) f
        WHERE true ${inRange('first_at')} GROUP BY type`,
      [...base, ...bounds],
    )
  ).rows;
  const pick = (rows: TypeCount[]) =>
    Object.fromEntries(types.map((type) => [type, rows.find((r) => r.type === type)?.n ?? 0]));
  return { totals: pick(totals), unique: pick(unique) };
}

async function localMidnight(day: string, zone: string): Promise<Date> {
  return (await t.db.raw<RawResult<{ at: Date }>>('SELECT (?::timestamp AT TIME ZONE ?) AS at', [day, zone])).rows[0]
    .at;
}

describe('analytics from rollups', () => {
  let campaigns: Layout[];
  let accounts: string[];

  function randomEvents(rnd: () => number, count: number): MailEventInput[] {
    const pickOne = <T>(list: T[]): T => list[Math.floor(rnd() * list.length)];
    const start = Date.parse('2026-11-01T00:00:00Z');
    return Array.from({ length: count }, () => {
      const c = pickOne(campaigns);
      const step = pickOne(c.steps);
      const noCampaign = rnd() < 0.05;
      return {
        type: pickOne(TYPES),
        // Minutes over 20 days, in random order: later events often come first.
        at: new Date(start + Math.floor(rnd() * 20 * 24 * 60) * 60_000),
        campaignId: noCampaign ? null : c.campaignId,
        stepId: noCampaign ? null : step.stepId,
        variantId: noCampaign || rnd() < 0.1 ? null : pickOne(step.variantIds),
        accountId: rnd() < 0.1 ? null : pickOne(accounts),
        contactId: rnd() < 0.05 ? null : pickOne(c.contactIds),
        flagged: rnd() < 0.15,
        warmup: rnd() < 0.1,
      };
    });
  }
  beforeAll(async () => {
    campaigns = [await layout('One'), await layout('Two')];
    accounts = [];
    for (const email of ['a@acme.io', 'b@acme.io']) {
      const { data } = await ws.client.POST('/v2/account/connect', {
        body: { email, provider: 'google', smtp: { password: 'pw' }, dailyLimit: 50 },
      });
      accounts.push(data!.data.account.id);
    }
    await recordMailEvents(t, ws.workspaceId, randomEvents(random(26), 400));
  });

  it('answers the summary of the workspace and of each campaign as the raw events do, in every zone and range', async () => {
    for (const zone of ZONES) {
      await t.db('workspaces').where({ id: ws.workspaceId }).update({ timezone: zone });
      for (const [startDate, endDate] of RANGES) {
        const from = await localMidnight(startDate, zone);
        const to = await localMidnight(addDays(endDate, 1), zone);
        for (const campaignId of [undefined, ...campaigns.map((c) => c.campaignId)]) {
          const { data } = await ws.client.GET('/v1/analytics/campaign/summary', {
            params: { query: { campaignId, startDate, endDate } },
          });
          const expected = await rawCounts(campaignId ? { campaign_id: campaignId } : {}, from, to);
          expect({ zone, startDate, campaignId, totals: data!.data.totals, unique: data!.data.unique }).toEqual({
            zone,
            startDate,
            campaignId,
            ...expected,
          });
          const days = (
            await t.db.raw<RawResult<TypeCount & { day: string }>>(
              `SELECT to_char(occurred_at AT TIME ZONE ?, 'YYYY-MM-DD') AS day, type, count(*)::int AS n FROM email_events
                WHERE workspace_id = ? AND NOT is_warmup AND occurred_at >= ? AND occurred_at < ? ${campaignId ? 'AND campaign_id = ?' : ''} GROUP BY 1, 2`,
              [zone, ws.workspaceId, from, to, ...(campaignId ? [campaignId] : [])],
            )
          ).rows;
          for (const entry of data!.data.graph) {
            for (const type of COUNTED)
              expect([zone, entry.date, type, entry[type as 'sent']]).toEqual([
                zone,
                entry.date,
                type,
                days.find((d) => d.day === entry.date && d.type === type)?.n ?? 0,
              ]);
          }
        }
      }
    }
  });

  it('answers the all-time counts as count(DISTINCT contact_id) over the raw events', async () => {
    for (const campaignId of [undefined, ...campaigns.map((c) => c.campaignId)]) {
      const { data } = await ws.client.GET('/v1/analytics/campaign/count', { params: { query: { campaignId } } });
      const expected = await rawCounts(campaignId ? { campaign_id: campaignId } : {}, null, null);
      expect({ emails: data!.data.emails, uniqueContacts: data!.data.uniqueContacts }).toEqual({
        emails: expected.totals,
        uniqueContacts: expected.unique,
      });
    }
  });

  it('answers the step and variant breakdown as the raw events do', async () => {
    const types = ['sent', 'replied', 'autoReplied', 'bounced'];
    const asCounts = (c: { totals: Record<string, number>; unique: Record<string, number> }) => ({
      sent: c.totals.sent,
      contactsSent: c.unique.sent,
      replies: c.totals.replied,
      uniqueReplies: c.unique.replied,
      autoReplies: c.totals.autoReplied,
      bounces: c.totals.bounced,
    });
    const shown = (c: {
      sent: number;
      contactsSent: number;
      replies: number;
      uniqueReplies: number;
      autoReplies: number;
      bounces: number;
    }) => ({
      sent: c.sent,
      contactsSent: c.contactsSent,
      replies: c.replies,
      uniqueReplies: c.uniqueReplies,
      autoReplies: c.autoReplies,
      bounces: c.bounces,
    });
    for (const zone of ['Asia/Kolkata', 'America/New_York']) {
      await t.db('workspaces').where({ id: ws.workspaceId }).update({ timezone: zone });
      for (const [startDate, endDate] of RANGES) {
        const from = await localMidnight(startDate, zone);
        const to = await localMidnight(addDays(endDate, 1), zone);
        for (const c of campaigns) {
          const { data } = await ws.client.GET('/v2/analytics/campaign/steps', {
            params: { query: { campaignId: c.campaignId, startDate, endDate } },
          });
          expect(shown(data!.data.campaign)).toEqual(
            asCounts(await rawCounts({ campaign_id: c.campaignId }, from, to, types)),
          );
          for (const [i, step] of c.steps.entries()) {
            const answer = data!.data.steps[i];
            expect(answer.stepId).toBe(step.stepId);
            expect(shown(answer.counts)).toEqual(asCounts(await rawCounts({ step_id: step.stepId }, from, to, types)));
            for (const [j, variantId] of step.variantIds.entries()) {
              expect(shown(answer.variants[j].counts)).toEqual(
                asCounts(await rawCounts({ variant_id: variantId }, from, to, types)),
              );
            }
          }
        }
      }
    }
  });

  it("answers each account's sends of a day in the workspace zone as the raw events do", async () => {
    for (const zone of ['Asia/Kathmandu', 'America/New_York']) {
      await t.db('workspaces').where({ id: ws.workspaceId }).update({ timezone: zone });
      for (const now of ['2026-11-03T12:00:00Z', '2026-11-15T23:50:00Z']) {
        t.clock.set(now);
        const { data } = await ws.client.GET('/v1/analytics/account/campaign/count');
        const day = data!.data.date;
        const rows = (
          await t.db.raw<RawResult<{ account_id: string; n: number }>>(
            `SELECT account_id, count(*)::int AS n FROM email_events WHERE workspace_id = ? AND type = 'sent' AND NOT is_warmup
                AND occurred_at >= (?::timestamp AT TIME ZONE ?) AND occurred_at < (?::timestamp AT TIME ZONE ?) GROUP BY 1`,
            [ws.workspaceId, day, zone, addDays(day, 1), zone],
          )
        ).rows;
        for (const item of data!.data.items)
          expect([zone, day, item.sentToday]).toEqual([
            zone,
            day,
            rows.find((r) => r.account_id === item.accountId)?.n ?? 0,
          ]);
      }
    }
  });

  it('keeps the same rollups through record as a rebuild from email_events, in a zone with a 45-minute offset', async () => {
    await t.db('workspaces').where({ id: ws.workspaceId }).update({ timezone: 'Asia/Kathmandu' });
    // A read in the new zone rebuilds the rollups in it; then more events through record.
    await ws.client.GET('/v1/analytics/campaign/summary');
    await recordMailEvents(t, ws.workspaceId, randomEvents(random(27), 150));
    const snapshot = async () => {
      const rows = async (table: string, order: string) =>
        (
          await t.db.raw<RawResult<Record<string, unknown>>>(
            `SELECT * FROM ${table} WHERE workspace_id = ? ORDER BY ${order}`,
            [ws.workspaceId],
          )
        ).rows;
      return {
        rollups: await rows('email_rollups', 'scope, scope_id, is_warmup, day, type'),
        totals: await rows('email_rollup_totals', 'scope, scope_id, is_warmup, type'),
        firsts: await rows('email_event_firsts', 'scope, scope_id, is_warmup, type, contact_id'),
        zones: await rows('email_rollup_zones', 'timezone'),
        days: await rows('email_rollup_days', 'campaign_id, day'),
      };
    };
    const kept = await snapshot();
    expect(kept.rollups.length).toBeGreaterThan(100);
    expect(kept.days.length).toBeGreaterThan(20);
    await rebuildRollups(t.db, ws.workspaceId);
    expect(await snapshot()).toEqual(kept);
  });
});
