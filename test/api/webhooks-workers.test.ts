/**
 * Two webhook workers on one PostgreSQL database (each its own connection pool) claim deliveries with
 * SKIP LOCKED: every event reaches the receiver exactly once.
 */
import knex from 'knex';
import { createServices } from '../../server/services';
import { startTestServer, type TestServer } from '../helpers/server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { describeIf } from '../helpers/binaries';

const onPostgres = describeIf(
  process.env.TEST_DATABASE_URL,
  'PostgreSQL: several processes share one database',
  'TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
);

jest.setTimeout(120_000);

onPostgres('webhook delivery with two workers', () => {
  let t: TestServer;
  let receiver: WebhookReceiver;
  let other: knex.Knex;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestServer({ config: { secretKey: '99'.repeat(32), allowPrivateWebhooks: true } });
    other = knex({ client: 'pg', connection: t.databaseUrl!, pool: { min: 0, max: 10 } });
  });
  afterAll(async () => {
    await other.destroy();
    await t.close();
    await receiver.close();
  });

  it('delivers each of 500 events once', async () => {
    const ws = await t.createWorkspace();
    await ws.client.POST('/v2/webhook/create', { body: { url: receiver.url, eventTypes: ['email.sent'] } });
    await t.db.transaction(async (trx) => {
      for (let i = 0; i < 500; i += 1)
        await t.services.events.record(trx, {
          workspaceId: ws.workspaceId,
          type: 'email.sent',
          data: { email: `c${i}@x.test` },
          mail: {},
        });
    });
    const second = createServices({ ...t.deps, db: other });
    const drain = async (worker: { runOnce(): Promise<number> }) => {
      let total = 0;
      // At most four of one subscription in flight at once (both workers together): many short rounds.
      for (let round = 0; round < 1000 && receiver.received.length < 500; round += 1) total += await worker.runOnce();
      return total;
    };
    const [a, b] = await Promise.all([drain(t.services.webhooks), drain(second.webhooks)]);
    expect(a + b).toBe(500);
    expect(receiver.received).toHaveLength(500);
    expect(new Set(receiver.received.map((h) => h.headers['webhook-id'])).size).toBe(500);
  });
});
