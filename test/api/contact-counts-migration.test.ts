/**
 * Migration 20261127020000 on data written the old way: a database migrated to the version before it gets
 * contacts in active, paused and draft campaigns (some with progress rows, as the old worker left them);
 * after migrating to the latest, the counters equal count(*) and every active contact of an active campaign
 * has a progress row (what the old worker's next run would have made), the others none.
 */
import type { Knex } from 'knex';
import { migrate, pendingMigrations, type Database } from '../../server/db';
import type { PlanRow } from '../../server/modules/workspace/store';
import { found } from '../helpers/rows';
import { databaseBefore } from '../helpers/server';
import { newId } from '../../server/platform/ids';

const MIGRATION = '20261127020000_contact_counts_and_due_index';

describe(`migration ${MIGRATION}`, () => {
  let database: Database;
  let db: Knex;
  beforeAll(async () => {
    database = await databaseBefore(MIGRATION);
    db = database.db;
  });
  afterAll(() => database.close());

  it('backfills the contact counters and the progress rows the old worker would have made', async () => {
    expect((await pendingMigrations(db))[0]).toBe(MIGRATION);
    const now = new Date('2026-11-20T10:00:00Z');
    const plan = (await found(db('plans').first<Pick<PlanRow, 'id'> | undefined>('id'), 'plan')).id;
    const workspace = newId();
    await db('workspaces').insert({ id: workspace, name: 'Old', plan_id: plan, created_at: now });
    const campaign = async (status: string) => {
      const id = newId();
      await db('campaigns').insert({
        id,
        workspace_id: workspace,
        name: `C ${status}`,
        status,
        created_at: now,
        updated_at: now,
      });
      return id;
    };
    const [active, paused, draft] = [await campaign('active'), await campaign('paused'), await campaign('draft')];
    const contacts: Record<string, string> = {};
    for (const [campaignId, rows] of [
      [
        active,
        [
          ['a1', 'active'],
          ['a2', 'active'],
          ['a3', 'paused'],
          ['a4', 'completed'],
          ['a5', 'active'],
        ],
      ],
      [
        paused,
        [
          ['p1', 'active'],
          ['p2', 'bounced'],
        ],
      ],
      [draft, [['d1', 'active']]],
    ] as const) {
      for (const [name, status] of rows) {
        contacts[name] = newId();
        await db('contacts').insert({
          id: contacts[name],
          workspace_id: workspace,
          campaign_id: campaignId,
          email: `${name}@old.test`,
          status,
          created_at: now,
          updated_at: now,
        });
      }
    }
    // a5 was already started by the old worker: its row stays as it was.
    await db('sending_progress').insert({
      contact_id: contacts.a5,
      workspace_id: workspace,
      campaign_id: active,
      step_number: 2,
      state: 'waiting',
      due_at: new Date('2026-11-22T10:00:00Z'),
      updated_at: now,
    });

    await migrate(db);
    expect(await pendingMigrations(db)).toEqual([]);

    const counted = await db('contacts')
      .groupBy('campaign_id', 'status')
      .orderBy(['campaign_id', 'status'])
      .select('campaign_id', 'status', db.raw('count(*)::int AS n'));
    expect(await db('contact_counts').orderBy(['campaign_id', 'status']).select('campaign_id', 'status', 'n')).toEqual(
      counted,
    );
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
    const after = await db('contacts')
      .groupBy('campaign_id', 'status')
      .orderBy(['campaign_id', 'status'])
      .select('campaign_id', 'status', db.raw('count(*)::int AS n'));
    expect(
      await db('contact_counts')
        .where('n', '<>', 0)
        .orderBy(['campaign_id', 'status'])
        .select('campaign_id', 'status', 'n'),
    ).toEqual(after);
  }, 120_000);
});
