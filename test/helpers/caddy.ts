/**
 * Caddy in front of the test server, getting its certificates from a Pebble of the test's own (Let's Encrypt's
 * ACME test server), both Debian's packages, on free loopback ports in a temporary directory:
 *
 *   const pebble = await startPebble();                    // its issuing root in `pebble.root`
 *   const caddy = await startCaddy(caddyfile, pebble);     // the Caddyfile's global options get the test's own
 *   ...
 *   await caddy.close();
 *   await pebble.close();
 *
 * Pebble's validation answers valid without connecting to the names (PEBBLE_VA_ALWAYS_VALID), so names that
 * resolve nowhere get certificates; what Caddy asks for is the test's subject.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath } from './binaries';
import { freePort } from './pgbouncer';

/** The Debian packages of the programs these tests drive that are not on PATH. */
export const caddyTestMissing = (): string[] => ['caddy', 'pebble', 'openssl'].filter((name) => !onPath(name));

export interface Pebble {
  /** The ACME directory URL, for Caddy's `acme_ca`. */
  directory: string;
  /** The certificate of Pebble's own HTTPS listener, for Caddy's `acme_ca_root`. */
  listenerCertFile: string;
  /** The root (PEM) the certificates Pebble issues chain to; a new one at every start. */
  root: string;
  close(): Promise<void>;
}

export interface Caddy {
  httpsPort: number;
  close(): Promise<void>;
}

export async function startPebble(): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'own-pebble-'));
  const listenerCertFile = join(dir, 'listener.pem');
  const listenerKey = join(dir, 'listener-key.pem');
  // Debian's package ships no certificate for the listener (upstream's test/certs): a self-signed one for 127.0.0.1.
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
      ...['-subj', '/CN=pebble', '-addext', 'subjectAltName=IP:127.0.0.1'],
      ...['-keyout', listenerKey, '-out', listenerCertFile],
    ],
    { stdio: 'pipe' },
  );
  const [port, managementPort] = [await freePort(), await freePort()];
  const config = join(dir, 'pebble.json');
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: listenerCertFile,
        privateKey: listenerKey,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  );
  const pebble = startDaemon('pebble', ['-config', config], {
    PEBBLE_VA_ALWAYS_VALID: '1',
    PEBBLE_VA_NOSLEEP: '1',
    // Every nonce good: no badNonce round trips.
    PEBBLE_WFE_NONCEREJECT: '0',
  });
  const ca = readFileSync(listenerCertFile);
  const fetchRoot = () =>
    new Promise<string | undefined>((resolve) => {
      get(`https://127.0.0.1:${managementPort}/roots/0`, { ca, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
      }).on('error', () => resolve(undefined));
    });
  // Listening once the management interface answers (Pebble logs its addresses before it binds them).
  const until = Date.now() + 10_000;
  for (;;) {
    const root = await fetchRoot();
    if (root)
      return {
        directory: `https://127.0.0.1:${port}/dir`,
        listenerCertFile,
        root,
        async close() {
          await pebble.stop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    if (pebble.exited() || Date.now() > until) {
      await pebble.stop();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pebble did not start:\n${pebble.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs `caddyfile` (`caddy run --adapter caddyfile`) with the test's global options put first in its global
 * options block: no admin endpoint, loopback only, free ports, Pebble as the CA, storage in a temporary directory.
 */
export async function startCaddy(caddyfile: string, pebble: Pebble): Promise<Caddy> {
  if (!caddyfile.startsWith('{\n')) throw new Error('the Caddyfile has no global options block to add to');
  const dir = mkdtempSync(join(tmpdir(), 'own-caddy-'));
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  const options = [
    'admin off',
    'default_bind 127.0.0.1',
    `http_port ${httpPort}`,
    `https_port ${httpsPort}`,
    `acme_ca ${pebble.directory}`,
    `acme_ca_root ${pebble.listenerCertFile}`,
  ];
  const file = join(dir, 'Caddyfile');
  writeFileSync(file, `{\n${options.map((o) => `\t${o}\n`).join('')}${caddyfile.slice(2)}`);
  // Caddy keeps certificates and its account under XDG_DATA_HOME, its autosave under XDG_CONFIG_HOME.
  const caddy = startDaemon('caddy', ['run', '--config', file, '--adapter', 'caddyfile'], {
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
  });
  const close = async () => {
    await caddy.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await caddy.logged('"msg":"serving initial configuration"');
  } catch (error) {
    await close();
    throw error;
  }
  return { httpsPort, close };
}

interface Daemon {
  output: () => string;
  exited: () => boolean;
  /** Resolves once the output contains `line` (up to 15 s); rejects when the process ends first. */
  logged: (line: string) => Promise<void>;
  /** SIGTERM, SIGKILL after 5 s; resolves once the process has ended. */
  stop: () => Promise<void>;
}

function startDaemon(binary: string, args: string[], env: Record<string, string>): Daemon {
  const child: ChildProcess = spawn(binary, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    output: () => output,
    exited,
    logged: (line) =>
      new Promise<void>((resolve, reject) => {
        const fail = (why: string) => {
          clearTimeout(timer);
          reject(new Error(`${binary} ${why}:\n${output}`));
        };
        const timer = setTimeout(() => fail(`did not log ${line} in 15 s`), 15_000);
        const check = () => {
          if (!output.includes(line)) return;
          clearTimeout(timer);
          resolve();
        };
        child.stderr!.on('data', check);
        child.stdout!.on('data', check);
        void ended.then(() => fail('ended'));
        check();
      }),
    async stop() {
      if (exited()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await ended;
      clearTimeout(timer);
    },
  };
}
