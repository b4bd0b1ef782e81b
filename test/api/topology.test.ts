/**
 * The production topology as plain processes on loopback (compose.yaml runs the same shape in containers): a
 * PostgreSQL database, a private PgBouncer in transaction mode in front of it, the migrate step, two API processes
 * and two workers by role (sending; everything else) behind the pooler, against the SMTP sink.
 *
 * A campaign of 1,000 contacts, launched through one API process and read through the other, mails every contact
 * once, though mid-campaign that API process is killed (kill -9), the pooler is down for 3 seconds, and the sending
 * worker is killed with messages on the wire and replaced; the accounts' daily limits, which hold the campaign
 * exactly, are used exactly. An import of 50,000 rows applies every row once and sends its `job.completed` webhook
 * once, though the worker running the jobs role is killed mid-import and replaced; the whole upload counts as one
 * request. The processes run on the real clock, so the campaign's schedule covers every hour of every day.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import createClient from 'openapi-fetch';
import type { paths } from '../../generated/api';
import type { Database } from '../../server/db';
import { pgbouncerMissing, startPgbouncer, type Pgbouncer } from '../helpers/pgbouncer';
import { scratchDatabase, startTestServer, type TestServer } from '../helpers/server';
import { startServerChild, startWorkerProcess, stopServerProcesses } from '../helpers/server-process';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const missing = process.env.TEST_DATABASE_URL ? pgbouncerMissing() : 'PostgreSQL (TEST_DATABASE_URL) is not set';
if (missing) console.log(`topology.test.ts skipped: ${missing}`);

const CONTACTS = 1000;
const ROWS = 50_000;
/** The two workers' WORKER_JOBS, as compose.yaml splits them. */
const ROLES = { sending: 'sending', rest: 'inbox,warmup,webhooks,jobs,placement,maintenance' };
jest.setTimeout(420_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads until `done` holds (the processes run on the real clock, so this polls). */
async function until<T>(what: string, read: () => T | Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Kills a process as a crash would (SIGKILL) and waits until it is gone. */
const crash = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

(missing ? describe.skip : describe)(`the topology as processes${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let database: Database & { url?: string };
  let pooler: Pgbouncer;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let t: TestServer;
  let apis: { url: string; child: ChildProcess }[];
  const workers = {} as Record<keyof typeof ROLES, ChildProcess>;
  const secretKey = '7a'.repeat(32);
  const env = {
    MIGRATE_ON_START: 'off',
    DATABASE_PREPARED_STATEMENTS: 'off',
    SECRET_KEY: secretKey,
    ALLOW_PRIVATE_MAIL_HOSTS: '1',
    ALLOW_PRIVATE_WEBHOOKS: '1',
    WORKER_TICK_SECONDS: '1',
  };
  const startWorker = async (role: keyof typeof ROLES) => {
    workers[role] = await startWorkerProcess(pooler.url, { ...env, WORKER_JOBS: ROLES[role] });
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startWebhookReceiver();
    database = await scratchDatabase();
    pooler = await startPgbouncer(database.url!);
    // The migrate step, on the server itself; the processes then start without migrating.
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '../../server/cli/index.ts'), 'migrate'],
      { env: { ...process.env, DATABASE_URL: database.url, NODE_OPTIONS: '' } },
    );
    [apis] = await Promise.all([
      Promise.all([0, 1].map(() => startServerChild(pooler.url, { ...env, WORKER_ENABLED: '0' }))),
      startWorker('sending'),
      startWorker('rest'),
    ]);
    // Workspaces and their keys are written by an in-process server on the same database (the admin's part).
    t = await startTestServer({ databaseUrl: pooler.url, config: { preparedStatements: false, secretKey } });
  });
  afterAll(async () => {
    stopServerProcesses();
    await sleep(1000);
    await t?.close();
    pooler?.destroy();
    await database?.close();
    await sink?.close();
    await receiver?.close();
  });

  /** A new workspace's client on each API process, and how many requests they sent (what its quota counts). */
  const workspace = async () => {
    const { apiKey } = await t.createWorkspace();
    const sent = { requests: 0 };
    const counted = (request: Request) => {
      sent.requests += 1;
      return fetch(request);
    };
    const [onA, onB] = apis.map(({ url }) =>
      createClient<paths>({ baseUrl: url, headers: { 'X-API-Key': apiKey }, fetch: counted }),
    );
    return { onA, onB, sent };
  };

  it('two API processes and two workers by role behind PgBouncer mail every contact once, through a kill -9 of an API process and of the sending worker and a pooler restart', async () => {
    const { onA, onB } = await workspace();
    const accountIds: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const res = await onA.POST('/v2/account/connect', {
        body: {
          email: `t${i}@acme-mail.io`,
          provider: 'smtp',
          // The two accounts' daily limits hold the campaign exactly: a send counted twice, or a claim of the dead
          // worker that kept its room or its account, would leave a contact unmailed today.
          dailyLimit: CONTACTS / 2,
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
    const launched = Date.now();
    expect((await onA.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);
    const mailed = (count: number) =>
      until(
        `${count} messages at the sink`,
        () => sink.received.length,
        (n) => n >= count,
      );

    // A quarter in: one API process dies (kill -9) and the pooler is down for 3 seconds; the other API process and
    // the workers carry on by themselves once it is back.
    await mailed(CONTACTS / 4);
    apis[0].child.kill('SIGKILL');
    pooler.stop();
    await sleep(3000);
    await pooler.start();

    // Half way: the sending worker dies mid-SMTP. The sink holds its answers, so the worker is killed once every
    // message it handed over has arrived and waits for its reply; the rest of its claimed batch is not handed over.
    await mailed(CONTACTS / 2);
    sink.delayMs = 10_000;
    const claims = () =>
      t
        .db('email_messages')
        .where({ campaign_id: campaignId, status: 'sending' })
        .select<{ to_address: string; account_id: string; handed_at: Date | null }[]>(
          'to_address',
          'account_id',
          'handed_at',
        );
    let seen = { count: -1, at: 0 };
    await until(
      'the sending worker waiting for replies',
      async () => ({ count: sink.received.length, handed: (await claims()).filter((c) => c.handed_at) }),
      ({ count, handed }) => {
        if (count !== seen.count) seen = { count, at: Date.now() };
        const arrived = new Set(sink.received.map((m) => m.envelope.to[0]));
        return Date.now() - seen.at >= 1000 && handed.length > 0 && handed.every((c) => arrived.has(c.to_address));
      },
    );
    await crash(workers.sending);
    sink.delayMs = 0;
    const stranded = await claims();
    const onTheWire = stranded.filter((c) => c.handed_at);
    await startWorker('sending');

    await until(
      'every contact mailed',
      () => new Set(sink.received.map((m) => m.envelope.to[0])).size,
      (n) => n >= CONTACTS,
    );
    console.log(
      `topology: ${CONTACTS} contacts mailed in ${Math.round((Date.now() - launched) / 1000)} s; the sending worker died with ${onTheWire.length} messages on the wire and ${stranded.length - onTheWire.length} claims not handed over`,
    );
    // A little longer: a second copy of any message would arrive now.
    await sleep(3000);
    const perRecipient = new Map<string, number>();
    for (const m of sink.received) perRecipient.set(m.envelope.to[0], (perRecipient.get(m.envelope.to[0]) ?? 0) + 1);
    expect(perRecipient.size).toBe(CONTACTS);
    expect([...perRecipient.values()].every((count) => count === 1)).toBe(true);
    // What the dead worker had on the wire arrived once and stays `sending` until its claim's lease (10 minutes)
    // turns it `unknown`: it is never sent again.
    expect(onTheWire.length).toBeGreaterThan(0);
    expect(onTheWire.every((c) => perRecipient.get(c.to_address) === 1)).toBe(true);
    const status = await onB.GET('/v2/campaign/sending-status', { params: { query: { campaignId } } });
    expect(status.response.status).toBe(200);
    expect(status.data!.data.sentPerStep.map((s) => s.sent)).toEqual([CONTACTS - onTheWire.length]);
    // Each account's daily limit is used exactly: its recorded sends and its messages on the wire at the crash.
    const usage = await onB.GET('/v2/usage');
    expect(
      usage.data!.data.sends.accounts.map((a) => a.sent + onTheWire.filter((c) => c.account_id === a.accountId).length),
    ).toEqual([CONTACTS / 2, CONTACTS / 2]);
  });

  it('an import of 50,000 rows through PgBouncer applies every row once, though the worker running the jobs role is killed mid-import', async () => {
    const { onB, sent } = await workspace();
    expect(
      (await onB.POST('/v2/webhook/create', { body: { url: receiver.url, eventTypes: ['job.completed'] } })).response
        .status,
    ).toBe(201);
    const created = await onB.POST('/v2/campaign/create', { body: { name: 'Imported' } as never });
    const campaignId = created.data!.data.campaign.id;
    const emails = Array.from({ length: ROWS }, (_, i) => `r${i}@import.test`);
    const csv = ['email,firstName', ...emails.map((email, i) => `${email},R${i}`)].join('\n');
    const started = Date.now();
    const submitted = await onB.POST('/v2/job/contact-import', {
      params: { query: { campaignId } },
      body: csv as never,
      bodySerializer: (body) => body as string,
      headers: { 'Content-Type': 'text/csv' },
    });
    expect(submitted.response.status).toBe(202);
    const accepted = Date.now();
    const jobId = submitted.data!.data.job.id;
    const job = async () => (await onB.GET('/v2/job/get', { params: { query: { jobId } } })).data!.data.job;

    // A tenth in, the worker running the jobs role dies mid-import; a new one with the same roles takes over.
    await until('a tenth of the rows applied', job, (j) => j.progress.processed >= ROWS / 10);
    const dead = workers.rest.pid;
    await crash(workers.rest);
    const atKill = (await job()).progress.processed;
    expect(atKill).toBeLessThan(ROWS);
    await startWorker('rest');
    const done = await until('the import to end', job, (j) => j.status !== 'queued' && j.status !== 'running');
    console.log(
      `topology: ${ROWS} rows accepted in ${Math.round((accepted - started) / 1000)} s and applied in ${Math.round((Date.now() - accepted) / 1000)} s; the jobs worker died at ${atKill} rows applied`,
    );

    expect(done).toMatchObject({
      status: 'completed',
      progress: { total: ROWS, processed: ROWS },
      counts: { created: ROWS, skipped: 0, invalid: 0 },
    });
    const contacts = (await t.db('contacts').where({ campaign_id: campaignId }).pluck('email')) as string[];
    expect(contacts.sort()).toEqual([...emails].sort());
    const results = await t
      .db('job_results')
      .where({ job_id: jobId })
      .first<{ n: number; distinct_rows: number; created: number }>(
        t.db.raw('count(*)::int AS n'),
        t.db.raw('count(DISTINCT row_no)::int AS distinct_rows'),
        t.db.raw("count(*) FILTER (WHERE outcome = 'created')::int AS created"),
      );
    expect(results).toEqual({ n: ROWS, distinct_rows: ROWS, created: ROWS });
    // Both workers applied batches: the job was split by the kill.
    const appliedBy = (await t.db('job_batches').where({ job_id: jobId }).distinct().pluck('done_by')) as string[];
    expect(appliedBy.sort()).toEqual([`${hostname()}:${dead}`, `${hostname()}:${workers.rest.pid}`].sort());

    await until(
      'the job.completed webhook',
      () => receiver.received.length,
      (n) => n >= 1,
    );
    await sleep(3000);
    const hooks = receiver.received.map((h) => JSON.parse(h.body) as { type: string; data: { job: { id: string } } });
    expect(hooks.map((h) => [h.type, h.data.job.id])).toEqual([['job.completed', jobId]]);
    const usage = (await onB.GET('/v2/usage')).data!.data;
    expect(usage.contacts.used).toBe(ROWS);
    // Every request this workspace sent, this one included, and the upload of 50,000 rows as one of them.
    expect(usage.quota.find((w) => w.window === 'day')!.used).toBe(sent.requests);
  });
});
