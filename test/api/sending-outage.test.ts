/**
 * Sending survives what infrastructure does: PostgreSQL stopping mid-campaign, and a worker killed with
 * SIGKILL mid-batch. A message that may have been handed to SMTP is never sent twice; a contact whose
 * message never was goes out afterwards by itself. The database is a PostgreSQL of the test's own (it is
 * stopped and started), the SMTP server a loopback sink taking 100 ms a message. It runs in the suite's
 * PostgreSQL run only: the embedded run would repeat it on the same kind of database.
 */
import { startWorker } from '../../server/platform/worker';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres';
import { describeIf, postgresBinDir } from '../helpers/binaries';
import { startServerChild, stopServerProcesses } from '../helpers/server-process';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer } from '../helpers/server';

jest.setTimeout(240_000);

const SECRET_KEY = '66'.repeat(32);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A launched campaign of `count` contacts on one account of the sink, sending as fast as SMTP takes it. */
async function launchCampaign(
  t: TestServer,
  sink: SmtpSink,
  prefix: string,
  count: number,
): Promise<{ campaignId: string; emails: string[] }> {
  const ws = await t.createWorkspace();
  const account = await ws.client.POST('/v2/account/connect', {
    body: {
      email: `${prefix}@acme-mail.io`,
      provider: 'smtp',
      dailyLimit: 1000,
      smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
    } as never,
  });
  const created = await ws.client.POST('/v2/campaign/create', {
    body: {
      name: prefix,
      accountIds: [account.data!.data.account.id],
      schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' },
      options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
    } as never,
  });
  const campaignId = created.data!.data.campaign.id;
  await ws.client.POST('/v2/campaign/sequence-create', {
    body: {
      campaignId,
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello {{firstName}}', body: 'One' }] }],
    } as never,
  });
  const emails = Array.from({ length: count }, (_, i) => `${prefix}${i}@x.test`);
  const added = await ws.client.POST('/v1/contact/add', {
    body: { campaignId, contacts: emails.map((email, i) => ({ email, firstName: `N${i}` })) } as never,
  });
  expect(added.data!.data.added).toHaveLength(count);
  const launched = await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
  expect(launched.response.status).toBe(200);
  return { campaignId, emails };
}

function deliveriesPer(sink: SmtpSink, emails: string[]): Map<string, number> {
  const wanted = new Set(emails);
  const per = new Map<string, number>();
  for (const m of sink.received)
    if (wanted.has(m.envelope.to[0])) per.set(m.envelope.to[0], (per.get(m.envelope.to[0]) ?? 0) + 1);
  return per;
}

const suite = describeIf(
  process.env.TEST_DATABASE_URL && postgresBinDir(),
  "the PostgreSQL run (TEST_DATABASE_URL) and PostgreSQL's server programs (initdb, pg_ctl) on PATH or in `pg_config --bindir`",
  'apt-get install -y postgresql',
);

suite('sending across a database outage and a killed worker', () => {
  let pg: OwnPostgres;
  let sink: SmtpSink;
  let t: TestServer;

  beforeAll(async () => {
    pg = await startOwnPostgres();
    sink = await startSmtpSink();
    sink.delayMs = 100;
    t = await startTestServer({ databaseUrl: pg.url, config: { secretKey: SECRET_KEY, allowPrivateMailHosts: true } });
  });
  afterAll(async () => {
    stopServerProcesses();
    t.services.mail.close();
    await t.close();
    await sink.close();
    pg.destroy();
  });

  it('sends every contact exactly once when PostgreSQL stops for 3 s mid-campaign, resuming by itself', async () => {
    const { campaignId, emails } = await launchCampaign(t, sink, 'outage', 200);
    const worker = startWorker({ sending: t.services.sending }, { tickSeconds: 1, logger: t.deps.logger });
    try {
      await sleep(2500);
      pg.stop();
      const atStop = deliveriesPer(sink, emails).size;
      await sleep(3000);
      pg.start();
      const back = Date.now();
      const sinkAtStart = sink.received.length;
      await until('the first message after the outage', () => sink.received.length > sinkAtStart, 30_000);
      const firstAfter = Date.now() - back;
      await until('every contact delivered', () => deliveriesPer(sink, emails).size === 200, 60_000);
      const allDone = Date.now() - back;
      // Figures for the report: how far the campaign got before the outage and how fast it resumed.
      console.log(
        `outage: ${atStop}/200 delivered when PostgreSQL stopped; first message ${firstAfter} ms and all 200 ${allDone} ms after it was back`,
      );
      expect(firstAfter).toBeLessThan(10_000);
    } finally {
      await worker.stop();
    }
    const per = deliveriesPer(sink, emails);
    expect([...per.values()].every((n) => n === 1)).toBe(true);
    const messages = await t
      .db('email_messages')
      .where({ campaign_id: campaignId })
      .groupBy('status')
      .select('status', t.db.raw('count(*)::int AS n'));
    expect(messages).toEqual([{ status: 'sent', n: 200 }]);
    const progress = await t
      .db('sending_progress')
      .where({ campaign_id: campaignId })
      .groupBy('state')
      .select('state', t.db.raw('count(*)::int AS n'));
    expect(progress).toEqual([{ state: 'done', n: 200 }]);
  });

  it('after a worker is killed mid-batch, only messages it handed to SMTP are `unknown`; the rest go out once', async () => {
    const { campaignId, emails } = await launchCampaign(t, sink, 'killed', 300);
    const { child } = await startServerChild(pg.url, {
      SECRET_KEY,
      ALLOW_PRIVATE_MAIL_HOSTS: '1',
      SENDING_TICK_SECONDS: '1',
    });
    await until('the worker process sending', () => deliveriesPer(sink, emails).size >= 20, 60_000);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const atKill = deliveriesPer(sink, emails).size;
    const stranded = await t
      .db('email_messages')
      .where({ campaign_id: campaignId, status: 'sending' })
      .select<{ n: number; handed: number }[]>(
        t.db.raw('count(*)::int AS n'),
        t.db.raw('count(handed_at)::int AS handed'),
      );
    // The claims of the dead process: its whole batch, of which at most the account's connections were handed over.
    expect(stranded[0].n).toBeGreaterThan(100);
    expect(stranded[0].handed).toBeLessThanOrEqual(2);

    // This process takes over once the leases ran out (the test clock, set past the dead worker's real time).
    t.clock.set(new Date(Date.now() + 11 * 60_000));
    for (
      let round = 0;
      round < 50 &&
      deliveriesPer(sink, emails).size +
        Number(
          (await t.db('sending_progress').where({ campaign_id: campaignId, state: 'unknown' }).count('* as n'))[0].n,
        ) <
        300;
      round += 1
    ) {
      await t.services.sending.runOnce();
    }
    const per = deliveriesPer(sink, emails);
    const unknown: string[] = (
      await t
        .db('sending_progress as p')
        .join('contacts as c', 'c.id', 'p.contact_id')
        .where({ 'p.campaign_id': campaignId, 'p.state': 'unknown' })
        .select('c.email')
    ).map((r: { email: string }) => r.email);
    console.log(
      `kill -9: ${atKill}/300 delivered at the kill, ${stranded[0].n} claims stranded (${stranded[0].handed} handed to SMTP); after take-over ${per.size} delivered, ${unknown.length} unknown`,
    );
    expect([...per.values()].every((n) => n === 1)).toBe(true);
    expect(unknown.length).toBeLessThanOrEqual(2);
    for (const email of emails) expect(per.has(email) || unknown.includes(email)).toBe(true);
    expect(await t.db('email_messages').where({ campaign_id: campaignId, status: 'sending' }).count('* as n')).toEqual([
      { n: '0' },
    ]);
  });
});
