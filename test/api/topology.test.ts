/**
 * The production topology as plain processes on loopback (compose.yaml runs the same shape in containers): a
 * PostgreSQL database, a private PgBouncer in transaction mode in front of it, the migrate step, two API processes
 * and two workers by role (sending; everything else) behind the pooler, against the SMTP sink. A campaign launched
 * through one API process and read through the other mails every contact once, though one API process is killed
 * (kill -9) and the pooler is down for 3 seconds mid-campaign. The processes run on the real clock, so the campaign's
 * schedule covers every hour of every day.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import createClient from 'openapi-fetch';
import type { paths } from '../../generated/api';
import type { Database } from '../../server/db';
import { pgbouncerMissing, startPgbouncer, type Pgbouncer } from '../helpers/pgbouncer';
import { scratchDatabase, startTestServer, type TestServer } from '../helpers/server';
import { startServerChild, startWorkerProcess, stopServerProcesses } from '../helpers/server-process';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';

const missing = process.env.TEST_DATABASE_URL ? pgbouncerMissing() : 'PostgreSQL (TEST_DATABASE_URL) is not set';
if (missing) console.log(`topology.test.ts skipped: ${missing}`);

const CONTACTS = 200;
jest.setTimeout(420_000);

(missing ? describe.skip : describe)(`the topology as processes${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let database: Database & { url?: string };
  let pooler: Pgbouncer;
  let sink: SmtpSink;
  let t: TestServer;
  const secretKey = '7a'.repeat(32);

  beforeAll(async () => {
    sink = await startSmtpSink();
    database = await scratchDatabase();
    pooler = await startPgbouncer(database.url!);
  });
  afterAll(async () => {
    stopServerProcesses();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await t?.close();
    pooler?.destroy();
    await database?.close();
    await sink?.close();
  });

  it('two API processes and two workers by role behind PgBouncer mail every contact once, through a kill -9 and a pooler restart', async () => {
    // The migrate step, on the server itself; the processes then start without migrating.
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '../../server/cli/index.ts'), 'migrate'],
      {
        env: { ...process.env, DATABASE_URL: database.url, NODE_OPTIONS: '' },
      },
    );
    const env = {
      MIGRATE_ON_START: 'off',
      DATABASE_PREPARED_STATEMENTS: 'off',
      SECRET_KEY: secretKey,
      ALLOW_PRIVATE_MAIL_HOSTS: '1',
      WORKER_TICK_SECONDS: '1',
    };
    const [a, b] = await Promise.all([
      startServerChild(pooler.url, { ...env, WORKER_ENABLED: '0' }),
      startServerChild(pooler.url, { ...env, WORKER_ENABLED: '0' }),
      startWorkerProcess(pooler.url, { ...env, WORKER_JOBS: 'sending' }),
      startWorkerProcess(pooler.url, { ...env, WORKER_JOBS: 'inbox,warmup,webhooks,jobs,placement,maintenance' }),
    ]);
    // A workspace and its key, written by an in-process server on the same database (the admin's part).
    t = await startTestServer({ databaseUrl: pooler.url, config: { preparedStatements: false, secretKey } });
    const { apiKey } = await t.createWorkspace();
    const [onA, onB] = [a.url, b.url].map((baseUrl) =>
      createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } }),
    );

    const accountIds: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const res = await onA.POST('/v2/account/connect', {
        body: {
          email: `t${i}@acme-mail.io`,
          provider: 'smtp',
          dailyLimit: 500,
          smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        } as never,
      });
      expect(res.response.status).toBe(201);
      accountIds.push(res.data!.data.account.id);
    }
    const created = await onB.POST('/v2/campaign/create', {
      body: {
        name: 'Topology',
        accountIds,
        schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' },
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    await onA.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [{ delayDays: 0, variants: [{ subject: 'Hello {{firstName}}', body: 'Hi' }] }],
      } as never,
    });
    const emails = Array.from({ length: CONTACTS }, (_, i) => `p${i}@x.test`);
    const added = await onB.POST('/v1/contact/add', {
      body: { campaignId, contacts: emails.map((email, i) => ({ email, firstName: `P${i}` })) } as never,
    });
    expect(added.data!.data.added).toHaveLength(CONTACTS);
    expect((await onA.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);

    // Mid-campaign: one API process dies (kill -9) and the pooler is down for 3 seconds; the other API process and
    // the workers carry on by themselves once it is back.
    const mailed = async (count: number) => {
      const deadline = Date.now() + 300_000;
      while (sink.received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    };
    await mailed(CONTACTS / 4);
    a.child.kill('SIGKILL');
    pooler.stop();
    await new Promise((r) => setTimeout(r, 3000));
    await pooler.start();

    const until = Date.now() + 300_000;
    while (sink.received.length < CONTACTS && Date.now() < until) await new Promise((r) => setTimeout(r, 500));
    // A little longer: a second copy of any message would arrive now.
    await new Promise((r) => setTimeout(r, 3000));
    const perRecipient = new Map<string, number>();
    for (const m of sink.received) perRecipient.set(m.envelope.to[0], (perRecipient.get(m.envelope.to[0]) ?? 0) + 1);
    expect(perRecipient.size).toBe(CONTACTS);
    expect([...perRecipient.values()].every((count) => count === 1)).toBe(true);
    const status = await onB.GET('/v2/campaign/sending-status', { params: { query: { campaignId } } });
    expect(status.response.status).toBe(200);
    expect(status.data!.data.sentPerStep.map((s) => s.sent)).toEqual([CONTACTS]);
  });
});
