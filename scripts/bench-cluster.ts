/**
 * `npm run bench:cluster`: the production topology on loopback (a fresh PostgreSQL database, a private PgBouncer in
 * transaction mode when `pgbouncer` is installed, API and worker processes as in compose.yaml, the SMTP sink) and,
 * in one run: requests/s of 1 then 2 API processes (GET /v1/campaign/list, BENCH_CONCURRENCY at once for
 * BENCH_SECONDS), and messages/s of 1 then 2 sending workers (from the launch of a campaign of BENCH_CONTACTS contacts
 * to its last message in the sink, the workers already running), with the
 * CPU seconds each process used per second of the shape. BENCH_DATABASE_URL (else DATABASE_URL) names the server.
 */
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import createClient from 'openapi-fetch';
import type { paths } from '../generated/api';
import { freshBenchDatabase } from './bench-database';
import { migrate, openDatabase } from '../server/db';
import { pgbouncerMissing, startPgbouncer } from '../test/helpers/pgbouncer';
import { startTestServer } from '../test/helpers/server';
import { startServerChild, startWorkerProcess, stopServerProcesses } from '../test/helpers/server-process';
import { startSmtpSink } from '../test/helpers/smtp-sink';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1000);
const SECRET_KEY = 'b3'.repeat(32);

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name, in clock ticks (100 a second).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Runs `work` and answers its seconds and each process's CPU seconds per second over that time. */
async function measured(children: ChildProcess[], work: () => Promise<void>) {
  const before = children.map((c) => cpuSeconds(c.pid!));
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const cpu = children.map((c, i) => ((cpuSeconds(c.pid!) - before[i]) / seconds).toFixed(2));
  return { seconds, cpu: cpu.join(' + ') };
}

async function main(): Promise<void> {
  const fresh = await freshBenchDatabase(`lr_bench_cluster_${process.pid}`, 'bench:cluster');
  const pooler = pgbouncerMissing() ? null : await startPgbouncer(fresh.url);
  const url = pooler?.url ?? fresh.url;
  const sink = await startSmtpSink();
  const { db, close } = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
  await migrate(db);
  await close();
  const env = {
    MIGRATE_ON_START: 'off',
    DATABASE_PREPARED_STATEMENTS: pooler ? 'off' : 'on',
    SECRET_KEY,
    ALLOW_PRIVATE_MAIL_HOSTS: '1',
    WORKER_TICK_SECONDS: '1',
    // The helpers see a process start in its info lines (read from its stdout, not shown).
    LOG_LEVEL: 'info',
  };
  const admin = await startTestServer({
    databaseUrl: url,
    config: { preparedStatements: !pooler, secretKey: SECRET_KEY, allowPrivateMailHosts: true },
  });
  try {
    const { apiKey } = await admin.createWorkspace();
    console.log(
      `bench:cluster: PostgreSQL ${pooler ? 'behind a private PgBouncer (transaction mode)' : 'directly (no pgbouncer installed)'}; ${SECONDS} s per API shape, ${CONCURRENCY} requests at once; ${CONTACTS} contacts per sending shape`,
    );
    console.log('| shape | throughput | CPU s/s per process |\n| --- | --- | --- |');

    // API processes: 1, then 2 (requests spread over them in turn).
    const apis = [await startServerChild(url, { ...env, WORKER_ENABLED: '0' })];
    for (const count of [1, 2]) {
      if (apis.length < count) apis.push(await startServerChild(url, { ...env, WORKER_ENABLED: '0' }));
      const clients = apis.map(({ url: baseUrl }) =>
        createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } }),
      );
      let done = 0;
      let failed = 0;
      const { seconds, cpu } = await measured(
        apis.map((a) => a.child),
        async () => {
          const until = performance.now() + SECONDS * 1000;
          await Promise.all(
            Array.from({ length: CONCURRENCY }, async (_, lane) => {
              for (let i = lane; performance.now() < until; i += CONCURRENCY) {
                const res = await clients[i % clients.length].GET('/v1/campaign/list', {
                  params: { query: { limit: 20 } },
                });
                if (res.response.status === 200) done += 1;
                else failed += 1;
              }
            }),
          );
        },
      );
      console.log(
        `| ${count} API process${count > 1 ? 'es' : ''} | ${(done / seconds).toFixed(0)} requests/s${failed ? ` (${failed} failed)` : ''} | ${cpu} |`,
      );
    }

    // Sending workers: 1, then 2, each on a campaign of its own launched before the workers start.
    const client = createClient<paths>({ baseUrl: apis[0].url, headers: { 'X-API-Key': apiKey } });
    const accountIds: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const res = await client.POST('/v2/account/connect', {
        body: {
          email: `b${i}@acme-mail.io`,
          provider: 'smtp',
          dailyLimit: 2000,
          smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        } as never,
      });
      if (!res.data) throw new Error(`account connect answered ${res.response.status}`);
      accountIds.push(res.data.data.account.id);
    }
    const workers: ChildProcess[] = [];
    for (const count of [1, 2]) {
      const created = await client.POST('/v2/campaign/create', {
        body: {
          name: `Bench ${count}`,
          accountIds,
          schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' },
          options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
        } as never,
      });
      const campaignId = created.data!.data.campaign.id;
      await client.POST('/v2/campaign/sequence-create', {
        body: {
          campaignId,
          steps: [{ delayDays: 0, variants: [{ subject: 'Hi {{firstName}}', body: 'Hello' }] }],
        } as never,
      });
      for (let from = 0; from < CONTACTS; from += 500) {
        const contacts = Array.from({ length: Math.min(500, CONTACTS - from) }, (_, i) => ({
          email: `w${count}-${from + i}@x.test`,
          firstName: `N${from + i}`,
        }));
        await client.POST('/v1/contact/add', { body: { campaignId, contacts } as never });
      }
      while (workers.length < count) workers.push(await startWorkerProcess(url, { ...env, WORKER_JOBS: 'sending' }));
      const target = sink.received.length + CONTACTS;
      const { seconds, cpu } = await measured(workers, async () => {
        await client.POST('/v2/campaign/launch', { body: { campaignId } });
        while (sink.received.length < target) await new Promise((r) => setTimeout(r, 100));
      });
      console.log(
        `| ${count} sending worker${count > 1 ? 's' : ''} | ${(CONTACTS / seconds).toFixed(0)} messages/s | ${cpu} |`,
      );
    }
  } finally {
    stopServerProcesses();
    await new Promise((r) => setTimeout(r, 1000));
    await admin.close();
    pooler?.destroy();
    await sink.close();
    await fresh.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
