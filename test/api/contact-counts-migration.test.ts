/**
 * Migration 20261127020000 on data written the old way: a database migrated to the version before it gets
 * contacts in active, paused and draft campaigns (some with progress rows, as the old worker left them);
 * after migrating to the latest, the counters equal count(*) and every active contact of an active campaign
 * has a progress row (what the old worker's next run would have made), the others none.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { migrate, openDatabase, pendingMigrations, type Database } from '../../server/db';
import { newId } from '../../server/ids';

const MIGRATION = '20261127020000_contact_counts_and_due_index';
const DIR = join(__dirname, '../../server/db/migrations');

/** The migrations before this one, named as server/db names them (so `migrate` goes on from there). */
const before: Knex.MigrationSource<string> = {
  getMigrations: () => Promise.resolve(readdirSync(DIR).filter((f) => f.endsWith('.ts')).map((f) => f.replace(/\.ts$/, '')).filter((name) => name < MIGRATION).sort()),
  getMigrationName: (name) => name,
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  getMigration: (name) => Promise.resolve(require(join(DIR, name))),
};

async function freshDatabase(): Promise<Database> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return openDatabase({ databaseUrl: undefined, dataDir: '' }, { inMemory: true });
  const name = `${process.env.TEST_RUN_ID ?? 'lr_test'}_mig_${newId().replace(/-/g, '').slice(-12)}`;
  const admin = knex({ client: 'pg', connection: url });
  await admin.raw(`CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: target.toString(), dataDir: '' });
  return {
    ...database,
    close: async () => {
      await database.close();
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    },
  };
}

describe(`migration ${MIGRATION}`, () => {
  let database: Database;
  let db: Knex;
  beforeAll(async () => {
    database = await freshDatabase();
    db = database.db;
  });
  afterAll(() => database.close());

  it('backfills the contact counters and the progress rows the old worker would have made', async () => {
    await db.migrate.latest({ migrationSource: before });
    expect((await pendingMigrations(db))[0]).toBe(MIGRATION);
    const now = new Date('2026-11-20T10:00:00Z');
    const plan = (await db('plans').first('id')).id;
    const workspace = newId();
    await db('workspaces').insert({ id: workspace, name: 'Old', plan_id: plan, created_at: now });
    const campaign = async (status: string) => {
      const id = newId();
      await db('campaigns').insert({ id, workspace_id: workspace, name: `C ${status}`, status, created_at: now, updated_at: now });
      return id;
    };
    const [active, paused, draft] = [await campaign('active'), await campaign('paused'), await campaign('draft')];
    const contacts: Record<string, string> = {};
    for (const [campaignId, rows] of [
      [active, [['a1', 'active'], ['a2', 'active'], ['a3', 'paused'], ['a4', 'completed'], ['a5', 'active']]],
      [paused, [['p1', 'active'], ['p2', 'bounced']]],
      [draft, [['d1', 'active']]],
    ] as const) {
      for (const [name, status] of rows) {
        contacts[name] = newId();
        await db('contacts').insert({ id: contacts[name], workspace_id: workspace, campaign_id: campaignId, email: `${name}@old.test`, status, created_at: now, updated_at: now });
      }
    }
    // a5 was already started by the old worker: its row stays as it was.
    await db('sending_progress').insert({ contact_id: contacts.a5, workspace_id: workspace, campaign_id: active, step_number: 2, state: 'waiting', due_at: new Date('2026-11-22T10:00:00Z'), updated_at: now });

    await migrate(db);
    expect(await pendingMigrations(db)).toEqual([]);

    const counted = await db('contacts').groupBy('campaign_id', 'status').orderBy(['campaign_id', 'status']).select('campaign_id', 'status', db.raw('count(*)::int AS n'));
    expect(await db('contact_counts').orderBy(['campaign_id', 'status']).select('campaign_id', 'status', 'n')).toEqual(counted);
    expect(counted).toHaveLength(6);

    const progress = await db('sending_progress').orderBy('contact_id').select('contact_id', 'step_number', 'state');
    expect(progress).toEqual(
      [
        { contact_id: contacts.a1, step_number: 1, state: 'waiting' },
        { contact_id: contacts.a2, step_number: 1, state: 'waiting' },
        { contact_id: contacts.a5, step_number: 2, state: 'waiting' },
      ].sort((x, y) => (x.contact_id < y.contact_id ? -1 : 1)),
    );

    // From now on the triggers keep the counters.
    await db('contacts').where({ id: contacts.a1 }).update({ status: 'completed' });
    await db('contacts').where({ id: contacts.p1 }).update({ campaign_id: draft });
    await db('contacts').where({ id: contacts.a3 }).delete();
    const after = await db('contacts').groupBy('campaign_id', 'status').orderBy(['campaign_id', 'status']).select('campaign_id', 'status', db.raw('count(*)::int AS n'));
    expect(await db('contact_counts').where('n', '<>', 0).orderBy(['campaign_id', 'status']).select('campaign_id', 'status', 'n')).toEqual(after);
  }, 120_000);
});
