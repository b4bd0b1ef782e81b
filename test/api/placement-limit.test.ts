/**
 * Placement tests share an account's daily limit exactly, on PostgreSQL with two workers: a second test
 * claimed while the first one's messages are still going out counts them, so together they never pass it.
 */
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { createServices } from '../../server/services';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;
const SEEDS = ['seed1@gmail.test', 'seed2@gmail.test', 'seed3@yahoo.test', 'seed4@aol.test'];

onPostgres('placement tests and the daily limit, two workers', () => {
  let sink: SmtpSink;
  let t: TestServer;
  let ws: TestWorkspace;
  let sender: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({ config: { secretKey: '47'.repeat(32), allowPrivateMailHosts: true } });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    const { data, response } = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'ana@acme.test',
        provider: 'smtp',
        dailyLimit: 5,
        smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        imap: { host: '127.0.0.1', port: 1, password: 'pw' },
      },
    });
    expect(response.status).toBe(201);
    sender = data!.data.account.id;
    // Pool mailboxes to send to (never read here: the reads fail and are tried again later).
    for (const email of SEEDS)
      await t.services.warmup.addMailbox({
        email,
        password: 'pw',
        smtpHost: '127.0.0.1',
        smtpPort: 1,
        imapHost: '127.0.0.1',
        imapPort: 1,
      });
    // Each message takes the server a moment: the first test is still sending when the second is claimed.
    sink.delayMs = 150;
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
  });

  const create = async () => {
    const { data, response } = await ws.client.POST('/v2/placement/create', {
      body: { accountIds: [sender], subject: 'Quick question', text: 'Hi', recipientCount: 4 },
    });
    expect(response.status).toBe(201);
    return data!.data.test.id;
  };

  it('never sends past the limit when two tests go out at once', async () => {
    const second = createServices(t.deps);
    const first = await create();
    const running = t.services.placement.runOnce();
    // The first worker has claimed its test and is sending when the second test arrives at another worker.
    while (sink.received.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const other = await create();
    await Promise.all([running, second.placement.runOnce()]);
    second.mail.close();

    expect(sink.received).toHaveLength(5);
    const counted = await t
      .db('email_messages')
      .where({ account_id: sender, kind: 'placement' })
      .whereIn('status', ['sending', 'sent', 'unknown'])
      .count<{ n: string }[]>({ n: '*' });
    expect(Number(counted[0].n)).toBe(5);
    const results = await Promise.all(
      [first, other].map(
        async (id) => (await ws.client.GET('/v2/placement/get', { params: { query: { id } } })).data!.data.test.results,
      ),
    );
    const notSent = results.flat().filter((r) => r.placement === 'notSent');
    expect(notSent).toHaveLength(3);
    for (const r of notSent) expect(r.reason).toMatch(/daily limit of 5 emails/);
  });
});
