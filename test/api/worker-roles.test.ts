/**
 * Worker roles: WORKER_JOBS names the jobs a process runs; /readyz and the metrics name them; an unknown name stops
 * the start with one line. The worker process runs on PostgreSQL only (the embedded database has one process).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { jobsOfRoles } from '../../server/boot';
import { loadConfig } from '../../server/platform/config';
import { processOutput, startWorkerProcess, stopServerProcesses } from '../helpers/server-process';
import { startTestServer, type TestServer } from '../helpers/server';

jest.setTimeout(90_000);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  stopServerProcesses();
  await t.close();
});

it('runs every job by default, and only the named roles with WORKER_JOBS', () => {
  expect(loadConfig({}, {}).workerJobs).toEqual([
    'sending',
    'inbox',
    'warmup',
    'webhooks',
    'jobs',
    'placement',
    'maintenance',
  ]);
  const roles = loadConfig({}, { WORKER_JOBS: ' Maintenance, sending ' }).workerJobs;
  expect(roles).toEqual(['sending', 'maintenance']);
  expect(Object.keys(jobsOfRoles(t.services, roles)).sort()).toEqual(
    ['sending', 'idempotencyKeys', 'eventRetention', 'eventPartitions', 'auditRetention', 'trackingDomains'].sort(),
  );
  expect(Object.keys(jobsOfRoles(t.services, loadConfig({}, {}).workerJobs))).toHaveLength(12);
});

it('refuses an unknown job name at start with one line', async () => {
  expect(() => loadConfig({}, { WORKER_JOBS: 'sending,mailing' })).toThrow(
    'WORKER_JOBS names unknown jobs: mailing (known: sending, inbox, warmup, webhooks, jobs, placement, maintenance)',
  );
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../../server/worker-main.ts')], {
    env: { ...process.env, WORKER_JOBS: 'sending,mailing', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(code).toBe(1);
  expect(stderr.trim().split('\n')).toEqual([
    'Worker failed to start: WORKER_JOBS names unknown jobs: mailing (known: sending, inbox, warmup, webhooks, jobs, placement, maintenance)',
  ]);
});

(process.env.TEST_DATABASE_URL ? it : it.skip)(
  'a worker process names its jobs in /readyz and in the metrics, and runs only those',
  async () => {
    const child = await startWorkerProcess(t.databaseUrl!, {
      WORKER_JOBS: 'inbox,sending',
      WORKER_HEALTH_PORT: '0',
      METRICS_PORT: '0',
      WORKER_TICK_SECONDS: '1',
    });
    const log = processOutput(child);
    const healthPort = /"healthPort":(\d+)/.exec(log)![1];
    const metricsPort = /"metricsPort":(\d+)/.exec(log)![1];
    const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', jobs: ['sending', 'inbox'] });
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain('worker_role_running{role="sending"} 1');
    expect(metrics).toContain('worker_role_running{role="inbox"} 1');
    expect(metrics).toContain('worker_role_running{role="webhooks"} 0');
    expect(metrics).toContain('worker_role_running{role="maintenance"} 0');
    const ran = [...metrics.matchAll(/^worker_job_runs_total\{job="(\w+)"\}/gm)].map((m) => m[1]).sort();
    expect(ran).toEqual(['inbox', 'sending']);
  },
);
