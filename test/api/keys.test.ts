/**
 * A workspace's own API keys through HTTP: scopes declared by the spec and checked on every operation,
 * the life of a key (create read-only, a write refused naming the scope, rotate with an overlap, revoke,
 * 401 in a second server process), expiry, the last managing key, and a whitelabel sub-user's own keys.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { startServerProcess, stopServerProcesses } from '../helpers/server-process';
import { readBundledSpec } from '../../server/platform/project-root';
import { knownScopes, requiredScopes } from '../../server/platform/scopes';

jest.setTimeout(120_000);

let t: TestServer;
let ws: TestWorkspace;
let other: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace({ whitelabel: true });
  other = await t.createWorkspace();
});
afterAll(async () => {
  stopServerProcesses();
  await t?.close();
});

async function createKey(
  body: { name: string; scopes: string[]; expiresAt?: string },
  client = ws.client,
): Promise<{ id: string; apiKey: string }> {
  const r = await client.POST('/v2/api-key/create', { body });
  if (!r.data) throw new Error(`create: ${r.response.status} ${JSON.stringify(r.error)}`);
  return { id: r.data.data.key.id, apiKey: r.data.data.apiKey };
}

describe('scopes in the spec', () => {
  it('every served operation declares one, and the scopes a key can be given are the declared ones and all', () => {
    const spec = readBundledSpec();
    const scopes = requiredScopes(spec);
    expect(scopes.get('POST /v2/campaign/create')).toBe('campaigns:write');
    expect(scopes.get('GET /v1/campaign/list')).toBe('campaigns:read');
    expect(scopes.get('POST /v2/mixed_people/search')).toBe('credits:spend');
    expect(scopes.get('POST /v2/api-key/create')).toBe('keys:manage');
    expect(knownScopes(spec)).toEqual(expect.arrayContaining(['all', 'campaigns:read', 'keys:manage']));
    expect(knownScopes(spec)).not.toContain('platform:read');
  });

  it("docs/keys.md's table lists every scope with its operations", () => {
    const doc = readFileSync(join(__dirname, '../../docs/keys.md'), 'utf8');
    const rows = new Map(
      [...doc.matchAll(/^\| `([a-z]+:[a-z]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2].match(/`[^`]+`/g)!.length]),
    );
    const scopes = requiredScopes(readBundledSpec());
    const wanted = new Map<string, number>();
    for (const [op, scope] of scopes) {
      // A /v2 alias is listed by its /v1 original.
      if (scopes.has(op.replace(' /v2/', ' /v1/')) && op.includes(' /v2/')) continue;
      wanted.set(scope, (wanted.get(scope) ?? 0) + 1);
    }
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(wanted));
  });
});

describe('the life of a key', () => {
  it('a read-only key reads, is refused a write naming the scope, and cannot give more than it holds', async () => {
    const key = await createKey({ name: 'CRM sync', scopes: ['campaigns:read', 'analytics:read'] });
    expect(key.apiKey).toMatch(/^lr_/);
    const ro = t.client(key.apiKey);

    expect((await ro.GET('/v1/campaign/list', { params: { query: {} } })).response.status).toBe(200);
    expect((await ro.GET('/v1/authenticate')).response.status).toBe(200);

    const refused = await ro.POST('/v2/campaign/create', { body: { name: 'Nope' } });
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({
      code: 'insufficient_scope',
      error: 'This API key lacks the scope campaigns:write that this operation needs.',
    });
    const v1 = await t.fetch('/v1/campaign/set/name', {
      method: 'POST',
      apiKey: key.apiKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ campaignId: '0192f0c4-0000-7000-8000-000000000000', name: 'x' }),
    });
    expect(v1.status).toBe(403);
    expect(await v1.json()).toEqual({
      error: 'This API key lacks the scope campaigns:write that this operation needs.',
    });

    // No keys:manage: it cannot manage keys, let alone give scopes it lacks.
    const noManage = await ro.POST('/v2/api-key/create', { body: { name: 'x', scopes: ['campaigns:read'] } });
    expect(noManage.error).toMatchObject({ code: 'insufficient_scope' });
    const manager = await createKey({ name: 'manager', scopes: ['keys:manage', 'campaigns:read'] });
    const more = await t
      .client(manager.apiKey)
      .POST('/v2/api-key/create', { body: { name: 'x', scopes: ['campaigns:write', 'campaigns:read'] } });
    expect(more.response.status).toBe(403);
    expect(more.error?.error).toContain('campaigns:write');
    expect(
      (await t.client(manager.apiKey).POST('/v2/api-key/create', { body: { name: 'x', scopes: ['all'] } })).response
        .status,
    ).toBe(403);
    expect(
      (await t.client(manager.apiKey).POST('/v2/api-key/create', { body: { name: 'ok', scopes: ['campaigns:read'] } }))
        .response.status,
    ).toBe(200);
  });

  it('answers 400 naming unknown scopes, a past expiry and a name too long', async () => {
    const unknown = await ws.client.POST('/v2/api-key/create', {
      body: { name: 'x', scopes: ['campaigns:read', 'rockets:launch', 'nope'] },
    });
    expect(unknown.response.status).toBe(400);
    expect(unknown.error).toMatchObject({
      error: 'Unknown scopes: rockets:launch, nope.',
      details: [
        expect.objectContaining({ field: 'body.scopes.1', code: 'unknown_scope' }),
        expect.objectContaining({ field: 'body.scopes.2', code: 'unknown_scope' }),
      ],
    });
    const past = await ws.client.POST('/v2/api-key/create', {
      body: { name: 'x', scopes: ['all'], expiresAt: new Date(t.clock.now().getTime() - 1000).toISOString() },
    });
    expect(past.error).toMatchObject({ details: [expect.objectContaining({ field: 'body.expiresAt' })] });
    const long = await ws.client.POST('/v2/api-key/create', { body: { name: 'x'.repeat(101), scopes: ['all'] } });
    expect(long.response.status).toBe(400);
  });

  it('lists keys with prefix, scopes and last use, never a secret, and only the workspace its own', async () => {
    const key = await createKey({ name: 'listed', scopes: ['lists:read'] });
    await t.client(key.apiKey).GET('/v1/authenticate');
    const r = await ws.client.GET('/v2/api-key/list', { params: { query: { limit: 100 } } });
    const listed = r.data!.data.items.find((k) => k.id === key.id)!;
    expect(listed).toMatchObject({
      name: 'listed',
      prefix: key.apiKey.slice(0, 10),
      scopes: ['lists:read'],
      lastUsedAt: t.clock.now().toISOString(),
      revokedAt: null,
      expiresAt: null,
    });
    expect(JSON.stringify(r.data)).not.toContain(key.apiKey);
    const others = await other.client.GET('/v2/api-key/list', { params: { query: {} } });
    expect(others.data!.data.items.map((k) => k.id)).toEqual([other.keyId]);
  });

  it('keeps last use to the minute: a use within a minute of the last leaves it, a later one moves it', async () => {
    const key = await createKey({ name: 'used', scopes: ['lists:read'] });
    const lastUse = async () => {
      const r = await ws.client.GET('/v2/api-key/list', { params: { query: { limit: 100 } } });
      return r.data!.data.items.find((k) => k.id === key.id)!.lastUsedAt;
    };
    const first = t.clock.now().toISOString();
    await t.client(key.apiKey).GET('/v1/authenticate');
    t.clock.advance(30_000);
    await t.client(key.apiKey).GET('/v1/authenticate');
    expect(await lastUse()).toBe(first);
    t.clock.advance(31_000);
    await t.client(key.apiKey).GET('/v1/authenticate');
    expect(await lastUse()).toBe(t.clock.now().toISOString());
  });

  it('rotates with an overlap: both secrets work until it ends, then only the new one', async () => {
    const key = await createKey({ name: 'rotating', scopes: ['campaigns:read'] });
    const r = await ws.client.POST('/v2/api-key/rotate', { body: { id: key.id, overlapSeconds: 3600 } });
    expect(r.response.status).toBe(200);
    const fresh = r.data!.data.apiKey;
    expect(r.data!.data.key).toMatchObject({ id: key.id, prefix: fresh.slice(0, 10), scopes: ['campaigns:read'] });
    for (const secret of [key.apiKey, fresh]) {
      expect((await t.client(secret).GET('/v1/authenticate')).response.status).toBe(200);
    }
    t.clock.advance(3600_000 + 1000);
    const old = await t.client(key.apiKey).GET('/v1/authenticate');
    expect(old.response.status).toBe(401);
    expect(old.error).toEqual({ error: 'This API key has expired.' });
    expect((await t.client(fresh).GET('/v1/authenticate')).response.status).toBe(200);

    // Without an overlap the old secret stops at once.
    const again = await ws.client.POST('/v2/api-key/rotate', { body: { id: key.id, overlapSeconds: 0 } });
    expect((await t.client(fresh).GET('/v1/authenticate')).response.status).toBe(401);
    expect((await t.client(again.data!.data.apiKey).GET('/v1/authenticate')).response.status).toBe(200);
  });

  it('an expired key answers 401 from its expiry on', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const key = await createKey({ name: 'short', scopes: ['all'], expiresAt });
    expect((await t.client(key.apiKey).GET('/v1/authenticate')).response.status).toBe(200);
    t.clock.advance(61_000);
    const r = await t.client(key.apiKey).GET('/v1/authenticate');
    expect(r.response.status).toBe(401);
    expect(r.error).toEqual({ error: 'This API key has expired.' });
    const rotate = await ws.client.POST('/v2/api-key/rotate', { body: { id: key.id, overlapSeconds: 0 } });
    expect(rotate.response.status).toBe(409);
  });

  it("revokes: another workspace's key is a 404, the last managing key a 409, a revoked key a 401", async () => {
    const key = await createKey({ name: 'to revoke', scopes: ['campaigns:read'] });
    expect((await other.client.POST('/v2/api-key/revoke', { body: { id: key.id } })).response.status).toBe(404);
    expect(
      (await other.client.POST('/v2/api-key/rotate', { body: { id: key.id, overlapSeconds: 0 } })).response.status,
    ).toBe(404);
    const lone = await other.client.POST('/v2/api-key/revoke', { body: { id: other.keyId } });
    expect(lone.response.status).toBe(409);
    expect(lone.error).toMatchObject({ code: 'conflict' });
    expect(lone.error?.error).toContain('keys:manage');

    const r = await ws.client.POST('/v2/api-key/revoke', { body: { id: key.id } });
    expect(r.data!.data.key.revokedAt).toBe(t.clock.now().toISOString());
    const refused = await t.client(key.apiKey).GET('/v1/authenticate');
    expect(refused.response.status).toBe(401);
    expect(refused.error).toEqual({ error: 'This API key has been revoked.' });
  });

  const onPostgres = process.env.TEST_DATABASE_URL ? it : it.skip;
  onPostgres('a revocation holds at once in a second server process', async () => {
    const second = await startServerProcess(t.databaseUrl!);
    const key = await createKey({ name: 'two processes', scopes: ['campaigns:read'] });
    const call = () => fetch(`${second}/v1/authenticate`, { headers: { 'X-API-Key': key.apiKey } });
    expect((await call()).status).toBe(200);
    await ws.client.POST('/v2/api-key/revoke', { body: { id: key.id } });
    const r = await call();
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ error: 'This API key has been revoked.' });
  });
});

describe('least privilege: a key manages only keys within its own scopes and expiry', () => {
  /** Whether a key holding `manager` may manage a key holding `key`, written out apart from the server's rule. */
  const within = (manager: string[], key: string[]) =>
    manager.includes('all') ||
    key.every((s) => manager.includes(s) || (s.endsWith(':read') && manager.includes(s.replace(/:read$/, ':write'))));

  it('create, rotate and revoke each allow exactly the pairs of scope sets where the key is within the manager', async () => {
    const known = knownScopes(readBundledSpec());
    const managers = [
      ['all'],
      ['keys:manage'],
      ['keys:manage', 'campaigns:write'],
      ['keys:manage', 'campaigns:read', 'lists:read'],
    ];
    // Every known scope alone (all included), a subset and a superset of the managers' sets.
    const keySets = [...known.map((s) => [s]), ['campaigns:read', 'lists:read'], [...managers[3], 'webhooks:write']];
    // One target key per set, made again only once a revocation took it.
    const targets = new Map<string[], string>();
    for (const keyScopes of keySets)
      targets.set(keyScopes, (await createKey({ name: 'target', scopes: keyScopes })).id);
    const mismatches: string[] = [];
    for (const scopes of managers) {
      const manager = t.client((await createKey({ name: 'manager', scopes })).apiKey);
      for (const keyScopes of keySets) {
        const expected = within(scopes, keyScopes) ? 200 : 403;
        const id = targets.get(keyScopes)!;
        const answers = {
          create: (await manager.POST('/v2/api-key/create', { body: { name: 'made', scopes: keyScopes } })).response,
          rotate: (await manager.POST('/v2/api-key/rotate', { body: { id, overlapSeconds: 600 } })).response,
          revoke: (await manager.POST('/v2/api-key/revoke', { body: { id } })).response,
        };
        for (const [op, response] of Object.entries(answers)) {
          if (response.status !== expected)
            mismatches.push(`${scopes.join()} ${op} ${keyScopes.join()}: ${response.status}`);
        }
        if (answers.revoke.ok) targets.set(keyScopes, (await createKey({ name: 'target', scopes: keyScopes })).id);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("keys:manage alone cannot rotate or revoke the workspace's all key", async () => {
    const manager = t.client((await createKey({ name: 'manager', scopes: ['keys:manage'] })).apiKey);
    const rotate = await manager.POST('/v2/api-key/rotate', { body: { id: ws.keyId, overlapSeconds: 600 } });
    expect(rotate.response.status).toBe(403);
    expect(rotate.error?.code).toBe('forbidden');
    expect(rotate.error?.error).toContain('lacks all');
    expect(JSON.stringify(rotate.error)).not.toContain('lr_');
    expect((await manager.POST('/v2/api-key/revoke', { body: { id: ws.keyId } })).response.status).toBe(403);
    expect((await ws.client.GET('/v1/authenticate')).response.status).toBe(200);
  });

  it('a key that expires manages only keys that expire no later than it does', async () => {
    const at = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
    const maker = await createKey({ name: 'hour', scopes: ['keys:manage', 'lists:read'], expiresAt: at(3600_000) });
    const manager = t.client(maker.apiKey);
    const create = (expiresAt?: string) =>
      manager.POST('/v2/api-key/create', {
        body: { name: 'made', scopes: ['lists:read'], ...(expiresAt ? { expiresAt } : {}) },
      });

    const forever = await create();
    expect(forever.response.status).toBe(403);
    expect(forever.error?.error).toContain('expire');
    expect((await create(at(7200_000))).response.status).toBe(403);
    const shorter = await create(at(1800_000));
    expect(shorter.response.status).toBe(200);
    expect((await create(at(3600_000))).response.status).toBe(200);

    const lasting = await createKey({ name: 'lasting', scopes: ['lists:read'] });
    expect(
      (await manager.POST('/v2/api-key/rotate', { body: { id: lasting.id, overlapSeconds: 0 } })).response.status,
    ).toBe(403);
    expect((await manager.POST('/v2/api-key/revoke', { body: { id: lasting.id } })).response.status).toBe(403);
    const made = shorter.data!.data.key.id;
    expect((await manager.POST('/v2/api-key/rotate', { body: { id: made, overlapSeconds: 0 } })).response.status).toBe(
      200,
    );
    expect((await manager.POST('/v2/api-key/revoke', { body: { id: made } })).response.status).toBe(200);
    // A key manages itself.
    expect(
      (await manager.POST('/v2/api-key/rotate', { body: { id: maker.id, overlapSeconds: 60 } })).response.status,
    ).toBe(200);
  });
});

describe('whitelabel sub-users', () => {
  it('manage their own keys the same way, and the parent cannot touch them', async () => {
    const registered = await ws.client.POST('/v2/whitelabel/register', {
      body: { email: `sub${Date.now()}@acme-mail.io`, name: 'Sub' },
    });
    const subKey = registered.data!.data.apiKey;
    const sub = t.client(subKey);
    const created = await sub.POST('/v2/api-key/create', { body: { name: 'sub ro', scopes: ['campaigns:read'] } });
    expect(created.response.status).toBe(200);
    const subKeys = await sub.GET('/v2/api-key/list', { params: { query: {} } });
    expect(subKeys.data!.data.pagination.total).toBe(2);
    expect(
      (await ws.client.POST('/v2/api-key/revoke', { body: { id: created.data!.data.key.id } })).response.status,
    ).toBe(404);
  });
});
