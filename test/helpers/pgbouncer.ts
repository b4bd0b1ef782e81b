/**
 * A PgBouncer of the test's own in front of a PostgreSQL server: Debian's `pgbouncer` (apt), transaction pooling
 * (the mode that carries no session state, and in 1.18 no named prepared statements), a free loopback port, a
 * temporary directory, any database name passed through to the server. It may be stopped and started again on the
 * same port (a pooler restart). PgBouncer refuses to run as root, so it runs as the `postgres` OS user then.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pgbouncer {
  /** `upstream` with the pooler's host and port (same user and database). */
  url: string;
  port: number;
  /** Stops the pooler (its client and server connections end), and starts it again on the same port. */
  stop(): void;
  start(): Promise<void>;
  destroy(): void;
}

/** The pgbouncer binary, or null when it is not installed. */
export function pgbouncerBinary(): string | null {
  for (const path of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer']) {
    if (existsSync(path)) return path;
  }
  return null;
}

/** Why pooler tests cannot run here, or null when they can. */
export const pgbouncerMissing = (): string | null =>
  pgbouncerBinary() ? null : 'pgbouncer is not installed (apt-get install pgbouncer)';

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

export async function startPgbouncer(upstream: string, options: { poolSize?: number } = {}): Promise<Pgbouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error(pgbouncerMissing()!);
  const server = new URL(upstream);
  const dir = mkdtempSync(join(tmpdir(), 'own-pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(server.username || 'postgres');
  const ini = join(dir, 'pgbouncer.ini');
  const pidfile = join(dir, 'pgbouncer.pid');
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 20}`,
      'max_client_conn = 1000',
      // pg sends none of these, psql and others may.
      'ignore_startup_parameters = extra_float_digits,options',
      `pidfile = ${pidfile}`,
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    for (const file of ['', 'pgbouncer.ini', 'userlist.txt']) chownSync(join(dir, file), uid, gid);
  }
  const start = async () => {
    execFileSync(asRoot ? 'runuser' : binary, [...(asRoot ? ['-u', 'postgres', '--', binary] : []), '-d', ini], {
      stdio: 'pipe',
      timeout: 30_000,
    });
    waitFor(() => existsSync(pidfile), 'pgbouncer did not write its pid file');
    await listening(port);
  };
  const stop = () => {
    if (!existsSync(pidfile)) return;
    const pid = Number(readFileSync(pidfile, 'utf8').trim());
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      return;
    }
    waitFor(() => !alive(pid), 'pgbouncer did not stop');
    rmSync(pidfile, { force: true });
  };
  await start();
  const url = new URL(upstream);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    port,
    stop,
    start,
    destroy() {
      stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the port accepts a connection (up to 10 s). */
async function listening(port: number): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`pgbouncer does not listen on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls a condition for up to 10 s (start-up and shutdown of a daemon, outside any test clock). */
function waitFor(condition: () => boolean, message: string): void {
  const until = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > until) throw new Error(message);
    execFileSync('sleep', ['0.05']);
  }
}
