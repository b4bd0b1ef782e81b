/**
 * email_events partitioned by month (migration 20261128030000): the migration moves the events stored in the
 * plain table (and `down` moves them back), every event is stored whatever its date, the worker's partition
 * job creates months ahead and out of the default partition, and a retention drops old months while
 * analytics still answer from the rollups.
 */
import type { Knex } from 'knex';
import { newId } from '../../server/platform/ids';
import { rebuildRollups } from '../../server/modules/events/rollups';
import { TestClock } from '../helpers/clock';
import { recordMailEvents } from '../helpers/mail-events';
import { oldWorkspace } from '../helpers/old-workspace';
import { databaseBefore, startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const PARTITION = '20261128030000_partition_email_events';
const ZERO = { sent: 0, opened: 0, clicked: 0, replied: 0, bounced: 0, unsubscribed: 0 };

jest.setTimeout(180_000); // every migration one by one, then a server

/** Every event, all columns, in id order. */
const allEvents = (db: Knex) => db('email_events').orderBy('id').select();

/** Each event's partition, by id. */
async function partitionOf(db: Knex): Promise<Record<string, string>> {
  const rows = (
    await db.raw<{ rows: { id: string; partition: string }[] }>(
      'SELECT id, tableoid::regclass::text AS partition FROM email_events',
    )
  ).rows;
  return Object.fromEntries(rows.map((r) => [r.id, r.partition]));
}

/** email_events' partitions, sorted. */
async function partitions(db: Knex): Promise<string[]> {
  const rows = (
    await db.raw<{ rows: { name: string }[] }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'email_events'::regclass",
    )
  ).rows;
  return rows.map((r) => r.name).sort();
}

/** The table's kind (`p` partitioned, `r` plain), primary key, foreign keys and indexes. */
async function shape(db: Knex) {
  const kind = (
    await db.raw<{ rows: { relkind: string }[] }>("SELECT relkind FROM pg_class WHERE oid = 'email_events'::regclass")
  ).rows[0].relkind;
  const constraints = (
    await db.raw<{ rows: { name: string; def: string }[] }>(
      "SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'email_events'::regclass ORDER BY conname",
    )
  ).rows;
  const indexes = (
    await db.raw<{ rows: { name: string }[] }>(
      "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'email_events' ORDER BY indexname",
    )
  ).rows;
  return { kind, constraints, indexes: indexes.map((i) => i.name) };
}

describe('the migration', () => {
  let t: TestServer;
  afterAll(() => t?.close());

  it('moves the events of the plain table into month partitions, keeps keys and answers, and down moves them back', async () => {
    const database = await databaseBefore(PARTITION);
    const { db } = database;
    const plainShape = await shape(db);
    expect(plainShape.kind).toBe('r');

    const { workspaceId, campaignId, k1, k2, event } = await oldWorkspace(db, 'UTC');
    const old = [
      event('sent', k1, '2019-03-10T08:00:00Z'),
      event('sent', k2, '2026-09-30T23:59:59.999Z'), // the last instant of September (UTC)
      event('opened', k2, '2026-10-01T00:00:00Z'), // the first of October
      event('opened', k1, '2026-10-15T12:00:00Z', { flagged: true, message_id: newId() }),
      event('replied', k1, '2026-11-02T09:00:00Z'),
      event('sent', k1, '2026-11-02T09:00:00Z', { is_warmup: true }),
    ];
    await db('email_events').insert(old);
    const before = await allEvents(db);
    expect(before).toHaveLength(old.length);

    t = await startTestServer({ database, clock: new TestClock('2026-11-20T15:00:00Z') });
    const partitioned = await shape(db);
    expect(partitioned.kind).toBe('p');
    expect(await allEvents(db)).toEqual(before);
    expect(await partitionOf(db)).toEqual({
      [old[0].id]: 'email_events_2019_03',
      [old[1].id]: 'email_events_2026_09',
      [old[2].id]: 'email_events_2026_10',
      [old[3].id]: 'email_events_2026_10',
      [old[4].id]: 'email_events_2026_11',
      [old[5].id]: 'email_events_2026_11',
    });
    // The months present, the current one (by the database's clock) and the default.
    expect(await partitions(db)).toEqual(
      expect.arrayContaining([
        'email_events_2019_03',
        'email_events_2026_09',
        'email_events_2026_10',
        'email_events_2026_11',
        'email_events_default',
      ]),
    );
    // The same keys and indexes under the same names; the primary key holds the partition key.
    expect(partitioned.indexes).toEqual(plainShape.indexes);
    expect(partitioned.constraints.map((c) => c.name)).toEqual(plainShape.constraints.map((c) => c.name));
    expect(partitioned.constraints.filter((c) => c.name !== 'email_events_pkey')).toEqual(
      plainShape.constraints.filter((c) => c.name !== 'email_events_pkey'),
    );
    expect(partitioned.constraints.find((c) => c.name === 'email_events_pkey')!.def).toBe(
      'PRIMARY KEY (id, occurred_at)',
    );

    // Events written straight to the table have no rollups: the events module builds them from the partitions.
    await rebuildRollups(db);
    const client = t.client((await t.services.workspaces.createKey(workspaceId)).apiKey);
    const count = await client.GET('/v1/analytics/campaign/count', { params: { query: { campaignId } } });
    expect(count.data!.data.emails).toEqual({ ...ZERO, sent: 2, opened: 2, replied: 1 });
    // A deleted contact's events stay, without it (ON DELETE SET NULL through the partitions).
    await db('contacts').where({ id: k2 }).delete();
    expect(await db('email_events').whereNull('contact_id').pluck('id')).toEqual(
      expect.arrayContaining([old[1].id, old[2].id]),
    );
    const now = await allEvents(db);

    await db.migrate.down({ name: PARTITION });
    expect(await shape(db)).toEqual(plainShape);
    expect(await allEvents(db)).toEqual(now);
    await db.migrate.up({ name: PARTITION });
    expect(await allEvents(db)).toEqual(now);
    expect((await partitionOf(db))[old[0].id]).toBe('email_events_2019_03');
  });
});

describe('the partition job and the retention', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let campaignId: string;
  let contactId: string;
  // Six whole months kept before the current one.
  beforeAll(async () => {
    t = await startTestServer({ config: { emailEventRetentionMonths: 6 } });
    ws = await t.createWorkspace();
    const now = t.clock.now();
    campaignId = newId();
    contactId = newId();
    await t.db('campaigns').insert({
      id: campaignId,
      workspace_id: ws.workspaceId,
      name: 'C',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    await t.db('contacts').insert({
      id: contactId,
      workspace_id: ws.workspaceId,
      campaign_id: campaignId,
      email: 'k@lead.io',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
  });
  afterAll(() => t.close());

  const sent = (at: string) => ({ type: 'sent', at, campaignId, contactId });
  const count = async () =>
    (await ws.client.GET('/v1/analytics/campaign/count', { params: { query: { campaignId } } })).data!.data;
  const monthGraph = async (startDate: string, endDate: string) =>
    (await ws.client.GET('/v1/analytics/campaign/summary', { params: { query: { campaignId, startDate, endDate } } }))
      .data!.data.totals;

  it('stores an event of any date, in its month partition or the default one, and the job moves it into its month', async () => {
    t.clock.set('2026-11-23T10:00:00Z');
    // Whatever months exist so far (the migration's, by the real date), the job brings them to the clock's.
    await t.services.events.partitions.runOnce();
    expect(await partitions(t.db)).toEqual(
      expect.arrayContaining([
        'email_events_2026_11',
        'email_events_2026_12',
        'email_events_2027_01',
        'email_events_default',
      ]),
    );
    expect(await partitions(t.db)).not.toContain('email_events_2027_02');

    await recordMailEvents(t, ws.workspaceId, [
      sent('2026-11-23T10:00:00Z'),
      sent('2027-01-31T23:59:59Z'),
      sent('2027-02-01T00:00:00Z'),
      sent('2031-07-04T00:00:00Z'),
      sent('2026-06-10T00:00:00Z'),
    ]);
    const ids = (await t.db('email_events').orderBy('occurred_at').select('id', 'occurred_at')).map(
      (r: { id: string }) => r.id,
    );
    expect(ids).toHaveLength(5);
    const [jun, nov, jan, feb, far] = ids;
    expect(await partitionOf(t.db)).toEqual({
      [jun]: 'email_events_default',
      [nov]: 'email_events_2026_11',
      [jan]: 'email_events_2027_01',
      [feb]: 'email_events_default',
      [far]: 'email_events_default',
    });

    // The job looks at the catalog at most hourly: within the hour of its last look it leaves them in the default.
    t.clock.advance(59 * 60_000);
    expect(await t.services.events.partitions.runOnce()).toBe(0);
    expect(Object.values(await partitionOf(t.db)).filter((p) => p === 'email_events_default')).toHaveLength(3);
    t.clock.advance(60_000);
    // Two runs at once (two workers): one creates the three months, the other finds them made or the lock taken.
    const runs = await Promise.all([t.services.events.partitions.runOnce(), t.services.events.partitions.runOnce()]);
    expect(runs.reduce((a, b) => a + b)).toBe(3);
    expect(await t.services.events.partitions.runOnce()).toBe(0);
    expect(await partitionOf(t.db)).toEqual({
      [jun]: 'email_events_2026_06',
      [nov]: 'email_events_2026_11',
      [jan]: 'email_events_2027_01',
      [feb]: 'email_events_2027_02',
      [far]: 'email_events_2031_07',
    });
    expect(Number((await t.db('email_events_default').count<{ n: string }[]>('* AS n'))[0].n)).toBe(0);
  });

  it('drops the months older than the retention, and analytics still answer from the rollups', async () => {
    t.clock.set('2026-12-20T10:00:00Z');
    expect(await count()).toMatchObject({ emails: { ...ZERO, sent: 5 }, uniqueContacts: { ...ZERO, sent: 1 } });
    expect(await monthGraph('2026-06-01', '2026-06-30')).toEqual({ ...ZERO, sent: 1 });
    // June is within the six months before December, and December to February exist: nothing to do.
    expect(await t.services.events.partitions.runOnce()).toBe(0);
    expect(await partitions(t.db)).toContain('email_events_2026_06');

    t.clock.set('2027-01-05T10:00:00Z');
    // An event dated in the dropped range goes to the default and is deleted with it.
    await recordMailEvents(t, ws.workspaceId, [sent('2026-05-31T12:00:00Z')]);
    // March 2027 created, June 2026 dropped, the May event deleted.
    expect(await t.services.events.partitions.runOnce()).toBe(3);
    expect(await t.services.events.partitions.runOnce()).toBe(0);
    expect(await partitions(t.db)).not.toContain('email_events_2026_06');
    expect(await t.db('email_events').where({ workspace_id: ws.workspaceId }).pluck('occurred_at')).toHaveLength(4);

    // The rollups still count what was dropped.
    expect(await count()).toMatchObject({ emails: { ...ZERO, sent: 6 }, uniqueContacts: { ...ZERO, sent: 1 } });
    expect(await monthGraph('2026-06-01', '2026-06-30')).toEqual({ ...ZERO, sent: 1 });
    expect(await monthGraph('2026-05-01', '2026-05-31')).toEqual({ ...ZERO, sent: 1 });
  });

  it('loses the dropped months from the rollups when a zone change rebuilds them (a rebuild recounts what is kept)', async () => {
    await t.db('workspaces').where({ id: ws.workspaceId }).update({ timezone: 'Europe/Berlin' });
    expect(await monthGraph('2026-06-01', '2026-06-30')).toEqual(ZERO);
    expect(await count()).toMatchObject({ emails: { ...ZERO, sent: 4 } });
  });
});
