import { startTestServer, type TestServer } from '../helpers/server';
import type { Event } from '../../server/modules/events/service';

describe('events', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('writes the analytics row and calls listeners inside the caller transaction, and neither survives a rollback', async () => {
    const ws = await t.createWorkspace();
    const heard: Event[] = [];
    t.services.events.onRecorded(async (db, event) => {
      heard.push(event);
      // The listener writes with the recording transaction: a query on it must work (PGlite has one connection).
      await db.raw('select 1');
    });

    const kept = await t.db.transaction((trx) =>
      t.services.events.record(trx, {
        workspaceId: ws.workspaceId,
        type: 'email.sent',
        data: { note: 'kept' },
        mail: { flagged: false },
      }),
    );
    await expect(
      t.db.transaction(async (trx) => {
        await t.services.events.record(trx, {
          workspaceId: ws.workspaceId,
          type: 'email.opened',
          data: {},
          mail: { flagged: true },
        });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await t.db.transaction((trx) =>
      t.services.events.record(trx, { workspaceId: ws.workspaceId, type: 'campaign.launched', data: {} }),
    );

    expect(heard.map((e) => e.type)).toEqual(['email.sent', 'email.opened', 'campaign.launched']);
    const rows = await t.db('email_events').where({ workspace_id: ws.workspaceId }).select('id', 'type', 'flagged');
    expect(rows).toEqual([{ id: kept.id, type: 'sent', flagged: false }]);
  });
});
