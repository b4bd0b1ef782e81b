/**
 * More server processes on a test file's PostgreSQL database (server/main.ts, a random port), for
 * behaviour that must hold across processes. Every process started is killed by `stopAll()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const children: ChildProcess[] = [];
/** What each process has written to stdout so far (its JSON log lines). */
const outputs = new WeakMap<ChildProcess, string[]>();

/** The log lines a started process has written so far. */
export const processOutput = (child: ChildProcess): string => (outputs.get(child) ?? []).join('');

const record = (child: ChildProcess) => {
  const chunks: string[] = [];
  outputs.set(child, chunks);
  child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
};

/** Starts a process and answers its base URL once it listens. */
export async function startServerProcess(databaseUrl: string): Promise<string> {
  return (await startServerChild(databaseUrl)).url;
}

/** Starts a process (more settings in `env`) and answers it with its base URL once it listens. */
export function startServerChild(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../../server/main.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      SEED_DEMO: '0',
      LOG_LEVEL: 'info',
      NODE_OPTIONS: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  record(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server process did not start in 120 s')), 120_000);
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /"port":(\d+)/.exec(buffer);
      if (match) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${match[1]}`, child });
      }
    });
    child.on('exit', (code) => reject(new Error(`server process exited with ${code}`)));
  });
}

/**
 * Starts `npm run worker`'s entry (server/worker-main.ts) on the database with extra settings, and answers
 * the process once its worker runs (kill it with SIGKILL to play a crash).
 */
export function startWorkerProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../../server/worker-main.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  record(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker process did not start in 120 s')), 120_000);
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      if (buffer.includes('"msg":"worker started"')) {
        clearTimeout(timer);
        buffer = '';
        resolve(child);
      }
    });
    child.on('exit', (code) => reject(new Error(`worker process exited with ${code}`)));
  });
}

export function stopServerProcesses(): void {
  for (const child of children.splice(0)) child.kill('SIGTERM');
}
