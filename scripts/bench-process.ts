/** Child processes of the benchmarks: the API server on a free loopback port, waiting for it, its RSS, stopping it. */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The value after `name` on the command line (`-- --baseline REF`). */
export function argument(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * The sources of git revision `ref` of the checkout at `root` in a temporary folder that runs as a checkout
 * (node_modules linked from `root`), for a baseline beside this checkout's in the same run; `more` adds folders
 * (a benchmark that runs the revision's own script needs its scripts/ and the test helpers it imports).
 */
export function checkoutRevision(root: string, ref: string, more: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  execSync(`git archive ${ref} package.json tsconfig.json server generated spec ${more.join(' ')} | tar -x -C ${dir}`, {
    cwd: root,
    stdio: 'inherit',
  });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function waitReady(url: string, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode} (log: ${log})`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within 120 s (log: ${log})`);
}

export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A process's resident set size in MB, from /proc (Linux). */
export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return Math.round(kb / 1024);
}

/**
 * The API server (`server/main.ts` under `root`, a checkout) in a child process on a free loopback port against
 * `databaseUrl`, the worker off and responses not validated (as in production); its log goes to a temporary file.
 */
export async function startServer(
  root: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const logFile = join(tmpdir(), `bench-server-${process.pid}-${port}.log`);
  const logFd = openSync(logFile, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      PORT: String(port),
      SEED_DEMO: '0',
      LOG_LEVEL: 'info',
      VALIDATE_RESPONSES: '0',
      WORKER_ENABLED: '0',
      ...env,
    },
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/healthz`, child, logFile);
  return { child, base };
}

/**
 * Runs `fn` while sampling the RSS of process `pid` every 100 ms: its RSS before, at the peak, and `settleMs`
 * after `fn` ended (what the process kept).
 */
export async function withRss<T>(
  pid: number,
  fn: () => Promise<T>,
  settleMs = 2000,
): Promise<{ result: T; rssBeforeMb: number; rssPeakMb: number; rssAfterMb: number }> {
  const rssBeforeMb = rssMb(pid);
  let rssPeakMb = rssBeforeMb;
  const sampler = setInterval(() => (rssPeakMb = Math.max(rssPeakMb, rssMb(pid))), 100);
  try {
    const result = await fn();
    rssPeakMb = Math.max(rssPeakMb, rssMb(pid));
    clearInterval(sampler);
    await new Promise((r) => setTimeout(r, settleMs));
    return { result, rssBeforeMb, rssPeakMb, rssAfterMb: rssMb(pid) };
  } finally {
    clearInterval(sampler);
  }
}
