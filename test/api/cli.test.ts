/**
 * The admin CLI as an operator runs it (`npm run admin -- ...`), on the same database as the server:
 * keys it creates work over HTTP, keys it revokes stop working, bad arguments are reported clearly,
 * and the embedded database refuses a second process.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../server/db';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';
import { startTestServer, type TestServer } from '../helpers/server';

// Each command starts a process (tsx, migrations): slow on a loaded machine (over a minute at load 30).
jest.setTimeout(600_000);

const CLI = join(__dirname, '../../server/cli/index.ts');

/** Runs the CLI without blocking the event loop (the test server keeps serving meanwhile). */
function admin(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', CLI, ...args],
      { env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: '', ...env }, encoding: 'utf8', timeout: 240_000 },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let t: TestServer;
let dataDir: string;
beforeAll(async () => {
  t = await startTestServer();
  dataDir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
});
afterAll(async () => {
  await t.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** What `workspace create --json` prints (the test checks the values). */
type CreatedWorkspace = { workspaceId: string; apiKey: string };

describeOnEmbeddedDatabase()('on the embedded database', () => {
  it('creates a workspace, prints exactly one JSON object, lists it, adds credits', async () => {
    const created = await admin(['workspace', 'create', '--name', 'Acme', '--email', 'ops@acme.test', '--json'], {
      DATA_DIR: dataDir,
    });
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const { workspaceId, apiKey } = JSON.parse(lines[0]) as CreatedWorkspace;
    expect(workspaceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(apiKey).toMatch(/^lr_[A-Za-z0-9_-]{43}$/);

    const credits = await admin(['credits', 'add', '--workspace', workspaceId, '--amount', '50'], {
      DATA_DIR: dataDir,
    });
    expect(credits.stdout).toContain('Balance: 150.');

    const listed: unknown = JSON.parse((await admin(['workspace', 'list', '--json'], { DATA_DIR: dataDir })).stdout);
    expect(listed).toEqual([
      expect.objectContaining({ id: workspaceId, name: 'Acme', credits: 150, activeKeys: 1, plan: 'Default' }),
    ]);
  });

  it('reports bad arguments and exits non-zero', async () => {
    const res = await admin(
      ['credits', 'add', '--workspace', '00000000-0000-7000-8000-000000000000', '--amount', '-5'],
      {
        DATA_DIR: dataDir,
      },
    );
    expect(res.status).not.toBe(0);
    expect(res.stderr).toMatch(/expected a whole number from 1 to 1,000,000,000/);
    const missing = await admin(['workspace', 'create'], { DATA_DIR: dataDir });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toMatch(/--name/);
  });

  it.each([
    [
      ['key', 'create', '--workspace', 'nope'],
      /^error: option '--workspace <id>' argument 'nope' is invalid\. expected a workspace id/,
    ],
    [['key', 'create', '--workspace', '00000000-0000-7000-8000-000000000000'], /^error: Workspace not found\.$/],
    [['demo', '--workspace', 'nope'], /^error: option '--workspace <id>' argument 'nope' is invalid/],
    [['demo', '--workspace', '00000000-0000-7000-8000-000000000000'], /^error: Workspace not found\.$/],
    [['credits', 'add', '--workspace', 'nope', '--amount', '5'], /'--workspace <id>' argument 'nope' is invalid/],
    [
      ['credits', 'add', '--workspace', '00000000-0000-7000-8000-000000000000', '--amount', '2147483648'],
      /^error: option '--amount <n>' argument '2147483648' is invalid\. expected a whole number from 1 to 1,000,000,000$/,
    ],
    [
      ['leads', 'generate', '--people', '1e12', '--companies', '5'],
      /^error: option '--people <n>' argument '1e12' is invalid\. expected a whole number from 0 to 10,000,000$/,
    ],
    [['workspace', 'create', '--name', ''], /'--name <name>' argument '' is invalid\. the name must not be empty/],
    [['workspace', 'create', '--name', '   '], /'--name <name>' .* the name must not be empty/],
    [['workspace', 'create', '--name', 'a\u0007b'], /'--name <name>' .* must not contain control characters/],
    [
      ['workspace', 'create', '--name', 'Acme', '--email', 'not-an-address'],
      /'--email <email>' argument 'not-an-address' is invalid/,
    ],
    [
      ['leads', 'import', '--people', '.'],
      /'--people <file>' argument '\.' is invalid\. is a folder; expected a CSV file/,
    ],
    [
      ['leads', 'import', '--people', 'missing.csv'],
      /'--people <file>' argument 'missing\.csv' is invalid\. no such file/,
    ],
    [
      ['warmup', 'ban', 'nope', '--reason', 'x'],
      /value 'nope' is invalid for argument 'accountId'\. expected an account id/,
    ],
    [
      [
        'warmup',
        'mailbox',
        'add',
        '--email',
        'pool@example.com',
        '--password',
        'p',
        '--smtp-host',
        '169.254.169.254',
        '--imap-host',
        'imap.example.com',
      ],
      /^error: --smtp-host 169\.254\.169\.254: .*link-local address/,
    ],
  ])('refuses %j in one line naming the argument', async (args, message) => {
    const res = await admin(args, { DATA_DIR: dataDir });
    expect(res.status).not.toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr.trim()).toMatch(message);
  });

  it('prints a readable table for people', async () => {
    const res = await admin(['workspace', 'list'], { DATA_DIR: dataDir });
    const [header, rule, row] = res.stdout.trim().split('\n');
    expect(header).toMatch(/^id +name +plan +credits +active keys +whitelabel +parent +created$/);
    expect(rule).toMatch(/^-+( +-+)+$/);
    expect(row).toMatch(/^[0-9a-f-]{36} +Acme +Default +150 +1 +no +- +\d{4}-\d\d-\d\d \d\d:\d\d$/);
  });

  it("keeps the embedded database's files to their owner (folders 0700, files 0600)", () => {
    const open: string[] = [];
    const visit = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if ((statSync(path).mode & 0o077) !== 0) open.push(`${path} ${(statSync(path).mode & 0o777).toString(8)}`);
        if (entry.isDirectory()) visit(path);
      }
    };
    visit(dataDir);
    expect(open).toEqual([]);
    expect(readdirSync(join(dataDir, 'pgdata'))).toContain('pg_hba.conf');
  });

  it('refuses to open the embedded database while another process holds it', async () => {
    const held = await openDatabase({ databaseUrl: undefined, dataDir });
    try {
      const res = await admin(['workspace', 'list'], { DATA_DIR: dataDir });
      expect(res.status).toBe(1);
      expect(res.stderr).toMatch(/is in use by another process/);
    } finally {
      await held.close();
    }
  });
});

describe('on the server database', () => {
  it('issues keys that authenticate over HTTP and revokes them', async () => {
    if (!t.databaseUrl) {
      console.warn(
        'skipped: needs TEST_DATABASE_URL (the CLI and this test server cannot share an in-memory database)',
      );
      return;
    }
    const env = { DATABASE_URL: t.databaseUrl };
    const { workspaceId, apiKey } = JSON.parse(
      (await admin(['workspace', 'create', '--name', 'Beta', '--json'], env)).stdout,
    ) as CreatedWorkspace;
    expect((await t.fetch('/v1/authenticate', { apiKey })).status).toBe(200);

    const second = JSON.parse((await admin(['key', 'create', '--workspace', workspaceId, '--json'], env)).stdout) as {
      apiKey: string;
      keyId: string;
    };
    const auth = await t.client(second.apiKey).GET('/v1/authenticate');
    expect(auth.data?.data.workspace).toEqual({ id: workspaceId, name: 'Beta' });

    const revoked = await admin(['key', 'revoke', second.keyId], env);
    expect(revoked.status).toBe(0);
    const after = await t.fetch('/v1/authenticate', { apiKey: second.apiKey });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ error: 'This API key has been revoked.' });
    expect((await t.fetch('/v1/authenticate', { apiKey })).status).toBe(200);

    const unknown = await admin(['key', 'revoke', '00000000-0000-7000-8000-000000000000'], env);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/API key not found/);

    // key list: id, name, prefix, created, last used; then the operator revokes the workspace's last key by prefix.
    const listed = JSON.parse((await admin(['key', 'list', '--workspace', workspaceId, '--json'], env)).stdout) as {
      id: string;
      prefix: string;
      lastUsedAt: string | null;
      revokedAt: string | null;
    }[];
    expect(listed).toHaveLength(2);
    const first = listed.find((k) => k.id !== second.keyId)!;
    expect(first).toMatchObject({ prefix: apiKey.slice(0, 10), revokedAt: null });
    expect(first.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(listed)).not.toContain(apiKey);
    const byPrefix = await admin(['key', 'revoke', first.prefix], env);
    expect(byPrefix.stdout).toContain(first.id);
    expect((await t.fetch('/v1/authenticate', { apiKey })).status).toBe(401);
  });
});
