import { expect } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJson, type ErrorBody, type V1ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import { recordMailEvents } from '../helpers/mail-events';
import { SecretBox } from '../../server/platform/secrets';
import { AccountService } from '../../server/modules/account/service';
import { AccountStore } from '../../server/modules/account/store';
import { createDnsLookup } from '../../server/platform/dns';

const SECRET_KEY = '5f1c0a3e9b7d4c2a8e6f0b1d3c5a7e9f2b4d6f8a0c2e4a6b8d0f2a4c6e8a0b2d';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { secretKey: SECRET_KEY } });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set('2026-11-23T10:00:00.000Z'));

const googleAccount = (email: string) => ({ email, provider: 'google' as const, smtp: { password: 'app-password-1' } });

async function connect(ws: TestWorkspace, email: string) {
  const { data, response } = await ws.client.POST('/v2/account/connect', { body: googleAccount(email) });
  expect(response.status).toBe(201);
  return data!.data.account;
}

/** Warm-up needs to read the mailbox: an account with an IMAP login. */
async function connectReadable(ws: TestWorkspace, email: string) {
  const { data, response } = await ws.client.POST('/v2/account/connect', {
    body: { ...googleAccount(email), imap: { password: 'imap-1' } },
  });
  expect(response.status).toBe(201);
  return data!.data.account;
}

const ALL_DAY = { windowFrom: '00:00', windowTo: '24:00', weekdaysOnly: false };

async function insertSent(ws: TestWorkspace, accountId: string, at: string, warmup = false) {
  await recordMailEvents(t, ws.workspaceId, [{ type: 'sent', accountId, at, warmup }]);
}

async function v2Error(path: string, ws: TestWorkspace, init: RequestInit = {}) {
  const res = await t.fetch(path, { apiKey: ws.apiKey, headers: { 'content-type': 'application/json' }, ...init });
  return { status: res.status, body: await readJson<ErrorBody>(res) };
}

describe('POST /v2/account/connect', () => {
  it('connects a Google account with provider defaults, encrypted passwords and warm-up', async () => {
    const ws = await t.createWorkspace();
    const { data, response } = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'Jane@Acme-Mail.io',
        provider: 'google',
        smtp: { password: 'smtp-secret-1' },
        imap: { password: 'imap-secret-1' },
        dailyLimit: 40,
        warmup: { dailyLimit: 20, increasePerDay: 2 },
      },
    });
    expect(response.status).toBe(201);
    const account = data!.data.account;
    expect(account).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'jane@acme-mail.io',
      provider: 'google',
      status: 'active',
      auth: { type: 'password', provider: null },
      dailyLimit: 40,
      sentToday: 0,
      warmupSentToday: 0,
      warmup: {
        enabled: true,
        status: 'active',
        reason: null,
        inPool: true,
        dailyLimit: 20,
        increasePerDay: 2,
        replyRatePercent: 30,
        ...ALL_DAY,
      },
      smtp: { host: 'smtp.gmail.com', port: 587, username: 'jane@acme-mail.io' },
      imap: { host: 'imap.gmail.com', port: 993, username: 'jane@acme-mail.io' },
      createdAt: '2026-11-23T10:00:00.000Z',
      updatedAt: '2026-11-23T10:00:00.000Z',
      trackingDomain: null,
      mailboxProvider: 'google',
      bounceProtection: { ratePercent: null, window: null },
    });
    expect(JSON.stringify(data)).not.toContain('secret-1');

    const row = await t
      .db('email_accounts')
      .where({ id: account.id })
      .first<{ smtp_password_enc: string; imap_password_enc: string }>('smtp_password_enc', 'imap_password_enc');
    expect(row.smtp_password_enc).toMatch(/^v1\./);
    expect(row.smtp_password_enc).not.toContain('smtp-secret-1');
    const box = new SecretBox({ secretKey: SECRET_KEY, databaseUrl: undefined, dataDir: '' });
    expect(box.decrypt(row.smtp_password_enc, `${account.id}:smtp`)).toBe('smtp-secret-1');
    expect(box.decrypt(row.imap_password_enc, `${account.id}:imap`)).toBe('imap-secret-1');
    // Bound to its row and field: the SMTP ciphertext does not open as the IMAP one.
    expect(() => box.decrypt(row.smtp_password_enc, `${account.id}:imap`)).toThrow();

    // The first connect is an event for webhooks and the feed; a refused second connect is none.
    await ws.client.POST('/v2/account/connect', { body: googleAccount('jane@acme-mail.io') });
    const events = await ws.client.GET('/v2/event/list', { params: { query: { types: ['account.connected'] } } });
    expect(events.data!.data.items.map((e) => e.data)).toEqual([
      {
        accountId: account.id,
        email: 'jane@acme-mail.io',
        provider: 'google',
        auth: { type: 'password', provider: null },
      },
    ]);
  });

  it('connects an SMTP account with its own host, port and username, warm-up off and no IMAP', async () => {
    const ws = await t.createWorkspace();
    const { data } = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'sales@northwind.com',
        provider: 'smtp',
        smtp: { host: 'mail.northwind.com', port: 465, username: 'sales', password: 'pw' },
      },
    });
    expect(data!.data.account).toMatchObject({
      provider: 'smtp',
      dailyLimit: 50,
      warmup: { enabled: false, status: 'paused', dailyLimit: 10, increasePerDay: 1, replyRatePercent: 30 },
      smtp: { host: 'mail.northwind.com', port: 465, username: 'sales' },
      imap: null,
    });
  });

  it('requires the SMTP host and port for provider smtp, with v2 details', async () => {
    const ws = await t.createWorkspace();
    const { status, body } = await v2Error('/v2/account/connect', ws, {
      method: 'POST',
      body: JSON.stringify({ email: 'a@b.io', provider: 'smtp', smtp: { password: 'pw' } }),
    });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      error: 'Provider smtp needs the SMTP host and port.',
      code: 'validation_error',
      details: [
        { field: 'body.smtp.host', location: 'body', code: 'required' },
        { field: 'body.smtp.port', location: 'body', code: 'required' },
      ],
    });
    expect(Number((await t.db('email_accounts').where({ workspace_id: ws.workspaceId }).count({ n: '*' }))[0].n)).toBe(
      0,
    );
  });

  it('rejects schema violations: bad email, unknown provider, unknown field, missing password', async () => {
    const ws = await t.createWorkspace();
    const cases: [unknown, string][] = [
      [{ email: 'not-an-email', provider: 'google', smtp: { password: 'x' } }, 'body.email'],
      [{ email: 'a@b.io', provider: 'yahoo', smtp: { password: 'x' } }, 'body.provider'],
      [{ email: 'a@b.io', provider: 'google', smtp: { password: 'x' }, color: 'red' }, 'body.color'],
      [{ email: 'a@b.io', provider: 'google', smtp: {} }, 'body.smtp.password'],
      [{ email: 'a@b.io', provider: 'google', smtp: { password: 'x' }, dailyLimit: 0 }, 'body.dailyLimit'],
    ];
    for (const [payload, field] of cases) {
      const { status, body } = await v2Error('/v2/account/connect', ws, {
        method: 'POST',
        body: JSON.stringify(payload),
      });
      expect(status).toBe(400);
      expect(body.details.map((d) => d.field)).toContain(field);
    }
  });

  it('answers 409 for an address already connected in the workspace (case-insensitive), not in another', async () => {
    const ws = await t.createWorkspace();
    await connect(ws, 'dup@acme.io');
    const { status, body } = await v2Error('/v2/account/connect', ws, {
      method: 'POST',
      body: JSON.stringify(googleAccount('DUP@acme.io')),
    });
    expect(status).toBe(409);
    expect(body).toMatchObject({
      error: 'An email account with the address dup@acme.io is already connected in this workspace.',
      code: 'conflict',
    });
    const other = await t.createWorkspace();
    await connect(other, 'dup@acme.io');
  });

  it('lets one of several simultaneous connects of an address win; the others get 409', async () => {
    const ws = await t.createWorkspace();
    const statuses = await Promise.all(
      [0, 1, 2].map(
        async () =>
          (await ws.client.POST('/v2/account/connect', { body: googleAccount('race@acme.io') })).response.status,
      ),
    );
    expect(statuses.sort()).toEqual([201, 409, 409]);
    expect(await t.db('email_accounts').where({ workspace_id: ws.workspaceId }).select('email')).toEqual([
      { email: 'race@acme.io' },
    ]);
  });

  it("answers 403 when the plan's email-account cap is reached", async () => {
    const ws = await t.createWorkspace();
    const planId = newId();
    await t.db('plans').insert({
      id: planId,
      name: 'Two accounts',
      per_min: 1000,
      per_hour: 1000,
      per_day: 1000,
      credits: 0,
      max_email_accounts: 2,
      created_at: t.clock.now(),
    });
    await t.db('workspaces').where({ id: ws.workspaceId }).update({ plan_id: planId });
    await connect(ws, 'one@acme.io');
    await connect(ws, 'two@acme.io');
    const { status, body } = await v2Error('/v2/account/connect', ws, {
      method: 'POST',
      body: JSON.stringify(googleAccount('three@acme.io')),
    });
    expect(status).toBe(403);
    expect(body.error).toBe('Your plan allows at most 2 email accounts; remove one or upgrade the plan.');
  });

  it('is v2-only', async () => {
    const ws = await t.createWorkspace();
    const res = await t.fetch('/v1/account/connect', {
      apiKey: ws.apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(googleAccount('x@y.io')),
    });
    expect(res.status).toBe(404);
  });
});

describe('the encryption key', () => {
  it('is generated once in DATA_DIR for the embedded database and reused', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'secret-'));
    const first = new SecretBox({ secretKey: undefined, databaseUrl: undefined, dataDir });
    const sealed = first.encrypt('hello', 'ctx');
    const file = join(dataDir, 'secret.key');
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = new SecretBox({ secretKey: undefined, databaseUrl: undefined, dataDir });
    expect(second.decrypt(sealed, 'ctx')).toBe('hello');
  });

  it('refuses a malformed SECRET_KEY at start-up', () => {
    expect(() => new SecretBox({ secretKey: 'too-short', databaseUrl: undefined, dataDir: '' })).toThrow(
      /SECRET_KEY must be 32 bytes/,
    );
  });

  it('makes connect answer 409 on PostgreSQL without SECRET_KEY, storing nothing', async () => {
    const ws = await t.createWorkspace();
    const { db, clock, config } = t.deps;
    const noKey = new SecretBox({ secretKey: undefined, databaseUrl: 'postgres://db.internal/outreach', dataDir: '' });
    const accounts = new AccountService({
      db,
      store: new AccountStore(),
      events: t.services.events,
      campaigns: t.services.campaigns,
      workspaces: t.services.workspaces,
      secrets: noKey,
      dns: createDnsLookup(config),
      config,
      clock,
      warmupSentToday: t.services.warmup.sentToday,
      warmupHealth: (...args) => t.services.warmup.healthScores(...args),
      placementSentToday: t.services.placement.sentToday,
      trackingDomains: t.services.trackingDomains,
      mailboxProviders: (...args) => t.services.sending.knownProviders(...args),
    });
    await expect(accounts.connect(ws.workspaceId, googleAccount('a@b.io'))).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/^Email accounts cannot be connected: the server has no encryption key/),
    });
    expect(await t.db('email_accounts').where({ workspace_id: ws.workspaceId })).toEqual([]);
  });
});

describe('GET /v1/account/list', () => {
  it('lists oldest first with pagination, a status filter and sentToday from events', async () => {
    const ws = await t.createWorkspace();
    const a = await connect(ws, 'a@acme.io');
    t.clock.advance(1000);
    const b = await connect(ws, 'b@acme.io');
    t.clock.advance(1000);
    const c = await connect(ws, 'c@acme.io');
    await t.db('email_accounts').where({ id: b.id }).update({ status: 'connectionError' });
    await insertSent(ws, a.id, '2026-11-23T08:00:00Z');
    await insertSent(ws, a.id, '2026-11-23T09:00:00Z');
    await insertSent(ws, a.id, '2026-11-23T09:30:00Z', true); // warm-up: not counted
    await insertSent(ws, a.id, '2026-11-22T23:59:59Z'); // yesterday: not counted

    const { data } = await ws.client.GET('/v1/account/list', { params: { query: { limit: 2 } } });
    expect(data!.data.items.map((i) => [i.email, i.sentToday])).toEqual([
      ['a@acme.io', 2],
      ['b@acme.io', 0],
    ]);
    expect(data!.data.pagination).toEqual({ limit: 2, skip: 0, total: 3, hasMore: true });

    const page2 = await ws.client.GET('/v1/account/list', { params: { query: { limit: 2, skip: 2 } } });
    expect(page2.data!.data.items.map((i) => i.id)).toEqual([c.id]);
    expect(page2.data!.data.pagination.hasMore).toBe(false);

    const errored = await ws.client.GET('/v1/account/list', { params: { query: { status: 'connectionError' } } });
    expect(errored.data!.data.items.map((i) => i.id)).toEqual([b.id]);
    expect(errored.data!.data.pagination.total).toBe(1);

    const other = await t.createWorkspace();
    const empty = await other.client.GET('/v1/account/list');
    expect(empty.data!.data).toEqual({ items: [], pagination: { limit: 20, skip: 0, total: 0, hasMore: false } });
  });

  it('rejects a bad status or limit (v1 and v2 bodies)', async () => {
    const ws = await t.createWorkspace();
    const v1 = await t.fetch('/v1/account/list?status=sleeping', { apiKey: ws.apiKey });
    expect(v1.status).toBe(400);
    expect(Object.keys(await readJson<V1ErrorBody>(v1))).toEqual(['error']);
    const v2 = await v2Error('/v2/account/list?limit=101', ws);
    expect(v2.status).toBe(400);
    expect(v2.body.details[0]).toMatchObject({ field: 'query.limit', location: 'query' });
  });
});

describe('GET /v1/account/status', () => {
  it('tells whether the account can send, and why not', async () => {
    const ws = await t.createWorkspace();
    const account = await connect(ws, 'status@acme.io');
    const status = async () =>
      (await ws.client.GET('/v1/account/status', { params: { query: { accountId: account.id } } })).data!.data;
    expect(await status()).toEqual({
      accountId: account.id,
      email: 'status@acme.io',
      status: 'active',
      canSend: true,
      reason: null,
      statusReason: null,
      sentToday: 0,
      dailyLimit: 50,
      remainingToday: 50,
      warmupStatus: 'paused',
      retries: [],
    });
    await t.db('email_accounts').where({ id: account.id }).update({ daily_limit: 2 });
    await insertSent(ws, account.id, '2026-11-23T01:00:00Z');
    await insertSent(ws, account.id, '2026-11-23T02:00:00Z');
    expect(await status()).toMatchObject({
      canSend: false,
      reason: 'dailyLimitReached',
      sentToday: 2,
      remainingToday: 0,
    });
    await t.db('email_accounts').where({ id: account.id }).update({ status: 'sendingError' });
    expect(await status()).toMatchObject({ status: 'sendingError', canSend: false, reason: 'sendingError' });
  });

  it("answers 404 for an unknown or another workspace's account, 400 for a malformed id", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const theirs = await connect(other, 'theirs@acme.io');
    for (const id of [theirs.id, newId()]) {
      const res = await t.fetch(`/v1/account/status?accountId=${id}`, { apiKey: ws.apiKey });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Email account not found.' });
    }
    const bad = await v2Error('/v2/account/status?accountId=nope', ws);
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ field: 'query.accountId', code: 'format' });
  });
});

describe('POST /v1/account/warmup/enable and /pause', () => {
  it('enables with new settings, is idempotent, pauses keeping settings', async () => {
    const ws = await t.createWorkspace();
    const account = await connectReadable(ws, 'warm@acme.io');
    t.clock.advance(60_000);
    const enabled = await ws.client.POST('/v1/account/warmup/enable', {
      body: { accountId: account.id, warmup: { dailyLimit: 30, increasePerDay: 3 } },
    });
    expect(enabled.data!.message).toBe('Warm-up enabled');
    expect(enabled.data!.data.changed).toBe(true);
    expect(enabled.data!.data.account.warmup).toEqual({
      enabled: true,
      status: 'active',
      reason: null,
      inPool: true,
      dailyLimit: 30,
      increasePerDay: 3,
      replyRatePercent: 30,
      ...ALL_DAY,
    });
    expect(enabled.data!.data.account.updatedAt).toBe('2026-11-23T10:01:00.000Z');

    t.clock.advance(60_000);
    const again = await ws.client.POST('/v1/account/warmup/enable', { body: { accountId: account.id } });
    expect(again.data!.message).toBe('Warm-up already enabled');
    expect(again.data!.data.changed).toBe(false);
    expect(again.data!.data.account.updatedAt).toBe('2026-11-23T10:01:00.000Z');

    const paused = await ws.client.POST('/v1/account/warmup/pause', { body: { accountId: account.id } });
    expect(paused.data!.data.changed).toBe(true);
    expect(paused.data!.data.account.warmup).toEqual({
      enabled: false,
      status: 'paused',
      reason: { code: 'paused_by_user', message: 'Warm-up was paused through the API.' },
      inPool: false,
      dailyLimit: 30,
      increasePerDay: 3,
      replyRatePercent: 30,
      ...ALL_DAY,
    });
    const pausedAgain = await ws.client.POST('/v1/account/warmup/pause', { body: { accountId: account.id } });
    expect(pausedAgain.data!.message).toBe('Warm-up already paused');
    expect(pausedAgain.data!.data.changed).toBe(false);
  });

  it('refuses warm-up without IMAP (409) and bad windows or a zero ramp (400 naming the field)', async () => {
    const ws = await t.createWorkspace();
    const noImap = await connect(ws, 'noimap@acme.io');
    const refused = await v2Error('/v2/account/warmup/enable', ws, {
      method: 'POST',
      body: JSON.stringify({ accountId: noImap.id }),
    });
    expect(refused).toMatchObject({
      status: 409,
      body: {
        error: 'Warm-up needs to read the mailbox: connect the account with an IMAP login first.',
        details: [{ field: 'body.accountId', code: 'imap_required' }],
      },
    });
    const atConnect = await v2Error('/v2/account/connect', ws, {
      method: 'POST',
      body: JSON.stringify({ ...googleAccount('warm-noimap@acme.io'), warmup: {} }),
    });
    expect(atConnect.status).toBe(409);

    const ok = await connectReadable(ws, 'window@acme.io');
    const reversed = await v2Error('/v2/account/warmup/enable', ws, {
      method: 'POST',
      body: JSON.stringify({ accountId: ok.id, warmup: { windowFrom: '18:00', windowTo: '09:00' } }),
    });
    expect(reversed).toMatchObject({
      status: 400,
      body: {
        error: 'The warm-up window must open before it closes.',
        details: [{ field: 'body.warmup.windowTo', code: 'window_order' }],
      },
    });
    const badHour = await v2Error('/v2/account/warmup/enable', ws, {
      method: 'POST',
      body: JSON.stringify({ accountId: ok.id, warmup: { windowFrom: '25:00' } }),
    });
    expect(badHour.status).toBe(400);
    expect(badHour.body.details[0]).toMatchObject({ field: 'body.warmup.windowFrom' });
    const zero = await v2Error('/v2/account/warmup/enable', ws, {
      method: 'POST',
      body: JSON.stringify({ accountId: ok.id, warmup: { increasePerDay: 0 } }),
    });
    expect(zero.body.details[0]).toMatchObject({ field: 'body.warmup.increasePerDay', code: 'minimum' });
    expect(
      (await t.db('email_accounts').where({ id: ok.id }).first<{ warmup_enabled: boolean }>('warmup_enabled'))
        .warmup_enabled,
    ).toBe(false);

    const windowed = await ws.client.POST('/v1/account/warmup/enable', {
      body: { accountId: ok.id, warmup: { windowFrom: '08:00', windowTo: '17:30', weekdaysOnly: true } },
    });
    expect(windowed.data!.data.account.warmup).toMatchObject({
      windowFrom: '08:00',
      windowTo: '17:30',
      weekdaysOnly: true,
      inPool: true,
    });
  });

  it('refuses to enable a banned warm-up (409) and keeps the ban on pause', async () => {
    const ws = await t.createWorkspace();
    const account = await connectReadable(ws, 'banned@acme.io');
    await t.db('email_accounts').where({ id: account.id }).update({ warmup_status: 'banned' });
    const res = await t.fetch('/v1/account/warmup/enable', {
      apiKey: ws.apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountId: account.id }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: 'Warm-up cannot be enabled: the warm-up network has banned this account.',
    });
    const paused = await ws.client.POST('/v1/account/warmup/pause', { body: { accountId: account.id } });
    expect(paused.data!.data.account.warmup).toMatchObject({ enabled: false, status: 'banned' });
  });

  it("answers 404 for another workspace's or a deleted account, 400 for bad settings", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const theirs = await connect(other, 'warm-theirs@acme.io');
    for (const path of ['/v1/account/warmup/enable', '/v1/account/warmup/pause']) {
      const res = await t.fetch(path, {
        apiKey: ws.apiKey,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ accountId: theirs.id }),
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Email account not found.' });
    }
    expect(
      (await t.db('email_accounts').where({ id: theirs.id }).first<{ warmup_enabled: boolean }>('warmup_enabled'))
        .warmup_enabled,
    ).toBe(false);

    const mine = await connect(ws, 'gone@acme.io');
    await ws.client.DELETE('/v1/account/delete', { params: { query: { accountId: mine.id } } });
    const gone = await v2Error('/v2/account/warmup/enable', ws, {
      method: 'POST',
      body: JSON.stringify({ accountId: mine.id }),
    });
    expect(gone).toMatchObject({ status: 404, body: { error: 'Email account not found.', code: 'not_found' } });

    const bad = await v2Error('/v2/account/warmup/enable', ws, {
      method: 'POST',
      body: JSON.stringify({ accountId: theirs.id, warmup: { replyRatePercent: 101 } }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ field: 'body.warmup.replyRatePercent', code: 'maximum' });
  });
});

describe('DELETE /v1/account/delete', () => {
  async function campaign(ws: TestWorkspace, name: string, status: string, accountIds: string[]) {
    const id = newId();
    const now = t.clock.now();
    await t
      .db('campaigns')
      .insert({ id, workspace_id: ws.workspaceId, name, status, created_at: now, updated_at: now });
    for (const accountId of accountIds) {
      await t
        .db('campaign_accounts')
        .insert({ campaign_id: id, account_id: accountId, workspace_id: ws.workspaceId, created_at: now });
    }
    return id;
  }

  it('unlinks from campaigns, pauses an active campaign left with no account, keeps events', async () => {
    const ws = await t.createWorkspace();
    const gone = await connect(ws, 'gone@acme.io');
    const kept = await connect(ws, 'kept@acme.io');
    const onlyGone = await campaign(ws, 'Only gone', 'active', [gone.id]);
    const both = await campaign(ws, 'Both', 'active', [gone.id, kept.id]);
    const draft = await campaign(ws, 'Draft', 'draft', [gone.id]);
    const unrelated = await campaign(ws, 'Unrelated', 'active', [kept.id]);
    await insertSent(ws, gone.id, '2026-11-23T09:00:00Z');

    t.clock.advance(5000);
    const { data } = await ws.client.DELETE('/v1/account/delete', { params: { query: { accountId: gone.id } } });
    expect(data!.message).toBe('Email account removed');
    expect(data!.data).toEqual({
      accountId: gone.id,
      email: 'gone@acme.io',
      unlinkedCampaignIds: [onlyGone, both, draft].sort(),
      pausedCampaigns: [{ id: onlyGone, name: 'Only gone' }],
    });
    const statuses = Object.fromEntries(
      (
        await t
          .db('campaigns')
          .where({ workspace_id: ws.workspaceId })
          .select<{ id: string; status: string }[]>('id', 'status')
      ).map((c) => [c.id, c.status]),
    );
    expect(statuses).toEqual({ [onlyGone]: 'paused', [both]: 'active', [draft]: 'draft', [unrelated]: 'active' });
    expect(
      (
        await t.db('campaigns').where({ id: onlyGone }).first<{ updated_at: Date }>('updated_at')
      ).updated_at.toISOString(),
    ).toBe('2026-11-23T10:00:05.000Z');
    expect(await t.db('campaign_accounts').where({ account_id: gone.id })).toEqual([]);
    expect(await t.db('email_events').where({ workspace_id: ws.workspaceId }).select('account_id', 'type')).toEqual([
      { account_id: null, type: 'sent' },
    ]);

    const again = await t.fetch(`/v1/account/delete?accountId=${gone.id}`, { apiKey: ws.apiKey, method: 'DELETE' });
    expect(again.status).toBe(404);
  });

  it("answers 404 for another workspace's account and leaves it, 400 without accountId", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const theirs = await connect(other, 'safe@acme.io');
    const res = await v2Error(`/v2/account/delete?accountId=${theirs.id}`, ws, { method: 'DELETE' });
    expect(res).toMatchObject({
      status: 404,
      body: { error: 'Email account not found.', code: 'not_found', details: [] },
    });
    expect(await t.db('email_accounts').where({ id: theirs.id }).first()).toBeDefined();
    const missing = await v2Error('/v2/account/delete', ws, { method: 'DELETE' });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0]).toMatchObject({ field: 'query.accountId', code: 'required' });
  });
});
