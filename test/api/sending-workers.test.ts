/**
 * Several workers on one PostgreSQL database share the sending: each claims campaigns and contacts with
 * FOR UPDATE SKIP LOCKED, so every (contact, step) is delivered exactly once. (The embedded database
 * has one process, so this runs on PostgreSQL only.)
 */
import knex from 'knex';
import { createServices } from '../../server/services';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer } from '../helpers/server';
import { describeIf } from '../helpers/binaries';

const onPostgres = describeIf(
  process.env.TEST_DATABASE_URL,
  'PostgreSQL: several processes share one database',
  'TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
);

// 2,000 real SMTP deliveries: seconds alone, longer on a machine shared with the rest of the suite.
jest.setTimeout(180_000);

onPostgres('sending with two workers on one PostgreSQL', () => {
  let t: TestServer;
  let sink: SmtpSink;
  let other: knex.Knex;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({ config: { secretKey: '55'.repeat(32), allowPrivateMailHosts: true } });
    other = knex({ client: 'pg', connection: t.databaseUrl!, pool: { min: 0, max: 10 } });
  });
  afterAll(async () => {
    t.services.mail.close();
    await other.destroy();
    await t.close();
    await sink.close();
  });

  it('delivers every step of 1,000 contacts exactly once', async () => {
    t.clock.set('2026-11-23T10:00:00.000Z');
    const ws = await t.createWorkspace();
    const accountIds: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const res = await ws.client.POST('/v2/account/connect', {
        body: {
          email: `s${i}@acme-mail.io`,
          provider: 'smtp',
          dailyLimit: 500,
          smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        } as never,
      });
      accountIds.push(res.data!.data.account.id);
    }
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Two workers',
        accountIds,
        schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' },
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [
          { delayDays: 0, variants: [{ subject: 'One {{firstName}}', body: 'A' }] },
          { delayDays: 1, variants: [{ subject: '', body: 'B' }] },
        ],
      } as never,
    });
    const emails = Array.from({ length: 1000 }, (_, i) => `c${i}@x.test`);
    const added = await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: emails.map((email, i) => ({ email, firstName: `N${i}` })) } as never,
    });
    expect(added.data!.data.added).toHaveLength(1000);
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });

    // A second worker: its own services on its own connection pool, sharing the clock.
    const second = createServices({ ...t.deps, db: other });
    const completions: string[] = [];
    for (const events of [t.services.events, second.events]) {
      events.onRecorded((_db, e) => {
        if (e.type === 'campaign.completed') completions.push(e.data.campaignId as string);
        return Promise.resolve();
      });
    }
    // Each worker runs until the sink holds `target` messages (bounded), as a real worker loops forever.
    const drain = async (worker: { runOnce(): Promise<number> }, target: number) => {
      let total = 0;
      for (let round = 0; round < 200 && sink.received.length < target; round += 1) total += await worker.runOnce();
      return total;
    };
    try {
      const firstStep = await Promise.all([drain(t.services.sending, 1000), drain(second.sending, 1000)]);
      expect(firstStep[0] + firstStep[1]).toBe(1000);
      expect(Math.min(...firstStep)).toBeGreaterThan(0);
      t.clock.advance(86_400_000);
      const secondStep = await Promise.all([drain(t.services.sending, 2000), drain(second.sending, 2000)]);
      expect(await t.services.sending.runOnce()).toBe(0);
      expect(secondStep[0] + secondStep[1]).toBe(1000);
    } finally {
      second.mail.close();
    }
    const perRecipient = new Map<string, number>();
    for (const m of sink.received) perRecipient.set(m.envelope.to[0], (perRecipient.get(m.envelope.to[0]) ?? 0) + 1);
    expect(sink.received).toHaveLength(2000);
    expect([...perRecipient.values()].every((count) => count === 2)).toBe(true);
    expect(perRecipient.size).toBe(1000);
    const status = await ws.client.GET('/v2/campaign/sending-status', { params: { query: { campaignId } } });
    expect(status.data!.data.counts.completed).toBe(1000);
    expect(completions).toEqual([campaignId]);
    expect(status.data!.data.sentPerStep.map((s) => s.sent)).toEqual([1000, 1000]);
  });
});
