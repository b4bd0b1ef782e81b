/**
 * The server as `npm start` runs it, on a fresh embedded database: the first start creates a demo
 * workspace and prints its key once, the key works, the demo lead data answers a search, and
 * SIGTERM stops the process cleanly (the database is released for the next process).
 */
import { readJson, type Success } from '../helpers/bodies';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';

jest.setTimeout(180_000);

const MAIN = join(__dirname, '../../server/main.ts');

function start(
  dataDir: string,
  env: Record<string, string> = {},
): { child: ChildProcess; output: () => string; ready: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const port = /"port":(\d+)/.exec(out);
      if (port) {
        clearInterval(timer);
        resolve(`http://127.0.0.1:${port[1]}`);
      }
    }, 100);
    child.on('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`exited with ${code}: ${out}`));
    });
  });
  return { child, output: () => out, ready };
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

/** A start that must fail: it exits with 1, and prints one line that is not a JSON log line (returned). */
async function failedStart(dir: string, env: Record<string, string>): Promise<{ line: string; output: string }> {
  const server = start(dir, { SEED_DEMO: '0', WORKER_ENABLED: '0', ...env });
  const code = exitCode(server.child);
  await expect(server.ready).rejects.toThrow(/exited with 1/);
  expect(await code).toBe(1);
  const failure = server
    .output()
    .split('\n')
    .filter((l) => l && !l.startsWith('{'));
  expect(failure).toHaveLength(1);
  return { line: failure[0], output: server.output() };
}

describeOnEmbeddedDatabase()('the server as npm start runs it', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'server-process-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts with a demo workspace, serves its key, and stops cleanly on SIGTERM', async () => {
    const first = start(dataDir);
    const base = await first.ready;
    const apiKey = /API key \(shown once, keep it\): (lr_\S+)/.exec(first.output())?.[1];
    expect(apiKey).toBeDefined();
    expect(first.output()).toContain(`curl -H 'X-API-Key: ${apiKey}'`);
    // A quiet first start: up to "listening", only our JSON log lines and the first-start box, no library's notice.
    const out = first.output();
    const startLines = out.slice(0, out.indexOf('"msg":"listening')).split('\n').slice(0, -1).filter(Boolean);
    const foreign = startLines.filter(
      (line) =>
        !/^\{"level":\d+,.*"msg":/.test(line) &&
        !/^-{72}$|^First start: |^a demo lead database |^and a demo campaign |^API key \(shown once|^Try it: |^Docs: |^Console: |^MCP: /.test(
          line,
        ),
    );
    expect(foreign).toEqual([]);

    const auth = await fetch(`${base}/v1/authenticate`, { headers: { 'X-API-Key': apiKey! } });
    expect(auth.status).toBe(200);
    expect((await readJson<Success<'/v1/authenticate', 'get'>>(auth)).data.workspace.name).toBe('Demo workspace');

    const search = await fetch(`${base}/v1/mixed_people/search`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey!, 'Content-Type': 'application/json' },
      body: JSON.stringify({ perPage: 5 }),
    });
    expect(search.status).toBe(200);
    expect(
      (await readJson<Success<'/v1/mixed_people/search', 'post'>>(search)).data.pagination.totalEntries,
    ).toBeGreaterThan(0);

    // The demo week: its campaign's mail shows in the analytics.
    expect(first.output()).toMatch(/^and a demo campaign \(\S+\) that mailed 48 contacts over the past week/m);
    const summary = await fetch(`${base}/v1/analytics/campaign/summary`, { headers: { 'X-API-Key': apiKey! } });
    expect((await readJson<Success<'/v1/analytics/campaign/summary', 'get'>>(summary)).data.unique.sent).toBe(48);

    const exited = exitCode(first.child);
    first.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(first.output()).toContain('"msg":"stopped"');

    // The second start reuses the database: no new demo workspace, the old key still works.
    const second = start(dataDir);
    const base2 = await second.ready;
    expect(second.output()).not.toContain('First start');
    expect((await fetch(`${base2}/v1/authenticate`, { headers: { 'X-API-Key': apiKey! } })).status).toBe(200);
    const exited2 = exitCode(second.child);
    second.child.kill('SIGTERM');
    expect(await exited2).toBe(0);
  });

  it("builds the docs portal printing only its own line (the docs tool's notices are kept unless it fails)", () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '../../scripts/docs.ts')], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(result.status).toBe(0);
    expect(`${result.stdout}${result.stderr}`.trim()).toMatch(/^documentation portal: \S+index\.html$/);
  });

  it('takes over the embedded database at once after its owner was killed, and still refuses a live owner', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'server-kill-'));
    try {
      const first = start(dir, { SEED_DEMO: '0', WORKER_ENABLED: '0' });
      await first.ready;
      const killed = exitCode(first.child);
      first.child.kill('SIGKILL');
      await killed;
      const second = start(dir, { SEED_DEMO: '0', WORKER_ENABLED: '0' });
      await second.ready;
      const third = start(dir, { SEED_DEMO: '0', WORKER_ENABLED: '0' });
      await expect(third.ready).rejects.toThrow(/in use by another process/);
      const exited = exitCode(second.child);
      second.child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops within the grace period although a client sends its body one byte a second', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'server-slow-'));
    try {
      const server = start(dir, { SEED_DEMO: '0', WORKER_ENABLED: '0', SHUTDOWN_GRACE_SECONDS: '2' });
      const base = new URL(await server.ready);
      const socket = connect(Number(base.port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /v1/contact/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
      );
      const drip = setInterval(() => socket.write(' '), 1000);
      socket.on('error', () => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const exited = exitCode(server.child);
      const stoppedAt = Date.now();
      server.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      clearInterval(drip);
      socket.destroy();
      expect(Date.now() - stoppedAt).toBeLessThan(6000);
      expect(server.output()).toContain('shutdown grace period over');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** Holds a port on every interface, as another program would, until the answer's close() is called. */
  async function busyPort(): Promise<{ port: number; close: () => Promise<void> }> {
    const holder = createNetServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    return {
      port: (holder.address() as AddressInfo).port,
      close: () => new Promise((resolve) => holder.close(() => resolve())),
    };
  }

  it.each([
    ['PORT', (port: number) => ({ PORT: String(port) })],
    ['METRICS_PORT', (port: number) => ({ METRICS_PORT: String(port) })],
  ])('a busy %s is one line naming the port and the setting, and a non-zero exit', async (setting, env) => {
    const dir = mkdtempSync(join(tmpdir(), 'server-busy-'));
    const held = await busyPort();
    try {
      const { line } = await failedStart(dir, env(held.port));
      expect(line).toMatch(
        new RegExp(
          `^Failed to start: port ${held.port}( on \\S+)? is already in use \\(${setting}\\): stop the other process or set ${setting} to another port$`,
        ),
      );
    } finally {
      await held.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers GET / with where the docs and the spec are, and metrics listen on loopback by default', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'server-root-'));
    try {
      const server = start(dir, { SEED_DEMO: '0', WORKER_ENABLED: '0', METRICS_PORT: '0' });
      const base = await server.ready;
      const root = await fetch(`${base}/`);
      expect(root.status).toBe(200);
      expect(await root.json()).toEqual(expect.objectContaining({ docs: '/docs', openapi: '/openapi.json' }));
      expect(server.output()).toMatch(/"msg":"metrics at http:\/\/127\.0\.0\.1:\d+\/metrics"/);
      expect(server.output()).toMatch(/"msg":"database ready: \d+ migrations, \d+ applied"/);
      const exited = exitCode(server.child);
      server.child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [
      'not-a-url',
      /^Failed to start: DATABASE_URL must be a PostgreSQL URL, such as postgres:\/\/user:password@host:5432\/database$/,
    ],
    [
      'postgres://someone:secret@127.0.0.1:1/app',
      /^Failed to start: cannot connect to the database of DATABASE_URL \(127\.0\.0\.1:1\/app\): connect ECONNREFUSED 127\.0\.0\.1:1$/,
    ],
  ])('a bad DATABASE_URL (%s) is one line naming the setting, and a non-zero exit', async (url, line) => {
    const dir = mkdtempSync(join(tmpdir(), 'server-database-url-'));
    try {
      const failure = await failedStart(dir, { DATABASE_URL: url });
      expect(failure.line).toMatch(line);
      expect(failure.output).not.toContain('secret');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
