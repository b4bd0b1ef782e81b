/**
 * Health for a load balancer: /healthz while the process runs; /readyz only when the database answers and
 * every migration is applied, and 503 once a shutdown has started. Neither needs a key or counts to a quota, and
 * their polls are logged at debug, a 503 of /readyz included.
 */
import pino from 'pino';
import { found } from '../helpers/rows';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
const readiness = { draining: false, jobs: [] };
const logLines: string[] = [];
beforeAll(async () => {
  t = await startTestServer({
    app: { readiness },
    logger: pino({ level: 'debug' }, { write: (line: string) => logLines.push(line) }),
  });
});
afterAll(() => t.close());

it('answers ready with the database reachable and every migration applied, without a key', async () => {
  expect(await (await t.fetch('/healthz')).json()).toEqual({ status: 'ok' });
  const ready = await t.fetch('/readyz');
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: 'ok', jobs: [] });
});

it('answers 503 naming the migration this build has and the database lacks', async () => {
  const last = await found(
    t.db('knex_migrations').orderBy('id', 'desc').first<{ id: number; name: string } | undefined>(),
    'migration',
  );
  await t.db('knex_migrations').where({ id: last.id }).delete();
  try {
    const ready = await t.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'migrationsPending', pending: [last.name], jobs: [] });
  } finally {
    await t.db('knex_migrations').insert(last);
  }
  expect((await t.fetch('/readyz')).status).toBe(200);
});

it('answers 503 and closes the connection once shutdown has started, while /healthz stays up', async () => {
  readiness.draining = true;
  try {
    const ready = await t.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('connection')).toBe('close');
    expect(await ready.json()).toEqual({ status: 'draining', jobs: [] });
    expect((await t.fetch('/healthz')).status).toBe(200);
  } finally {
    readiness.draining = false;
  }
});

it('logs health polls at debug, a /readyz 503 included', async () => {
  logLines.length = 0;
  readiness.draining = true;
  try {
    expect((await t.fetch('/readyz')).status).toBe(503);
  } finally {
    readiness.draining = false;
  }
  expect((await t.fetch('/healthz')).status).toBe(200);
  await new Promise((resolve) => setImmediate(resolve));
  const polls = logLines.map((line) => JSON.parse(line) as { level: number; req?: { url: string } });
  expect(polls.map((p) => [p.req?.url, p.level])).toEqual([
    ['/readyz', 20],
    ['/healthz', 20],
  ]);
});
