/**
 * A PostgreSQL server of the test's own (the binaries `pg_config --bindir` names, or those on PATH, a temporary data directory, a free loopback
 * port), which the test may stop and start: a database outage on demand. PostgreSQL refuses to run as
 * root, so the commands run as the `postgres` OS user when the test runs as root.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresBinDir } from './binaries';

/** Why a private server (or a replica of one) cannot run here, or null when it can. */
export function ownPostgresMissing(): string | null {
  const bin = postgresBinDir();
  if (!bin) return 'PostgreSQL server programs not found: put initdb and pg_ctl on PATH, or pg_config';
  return existsSync(join(bin, 'pg_basebackup')) ? null : `pg_basebackup missing in ${bin}`;
}

export interface OwnPostgres {
  url: string;
  port: number;
  /** Stops the server ('fast': open connections are terminated, as on a restart or failover). */
  stop(): void;
  start(): void;
  destroy(): void;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

export async function startOwnPostgres(): Promise<OwnPostgres> {
  return startServer((run, data) => run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']));
}

/**
 * A streaming replica of `primary` (pg_basebackup -R: a copy that follows the primary's WAL, read-only), on its own
 * free port; `stop()` plays the replica going away. `applyDelay` (`'2s'`): how long after its commit on the primary
 * a change shows on the replica (recovery_min_apply_delay), a replica that lags.
 */
export async function startOwnReplica(
  primary: OwnPostgres,
  options: { applyDelay?: string } = {},
): Promise<OwnPostgres> {
  return startServer((run, data) => {
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      data,
      '-R',
      '-X',
      'stream',
    ]);
    if (options.applyDelay)
      appendFileSync(join(data, 'postgresql.auto.conf'), `recovery_min_apply_delay = '${options.applyDelay}'\n`);
  });
}

type Run = (command: string, args: string[]) => void;

async function startServer(create: (run: Run, data: string) => void): Promise<OwnPostgres> {
  const BIN = postgresBinDir();
  if (!BIN) throw new Error('PostgreSQL server programs not found: put initdb and pg_ctl on PATH, or pg_config');
  const dir = mkdtempSync(join(tmpdir(), 'own-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run: Run = (command, args) =>
    void execFileSync(
      asRoot ? 'runuser' : join(BIN, command),
      asRoot ? ['-u', 'postgres', '--', join(BIN, command), ...args] : args,
      { stdio: 'pipe', timeout: 60_000 },
    );
  const data = join(dir, 'data');
  create(run, data);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    destroy() {
      try {
        stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
