import { expect } from '@jest/globals';
import { readJson, type ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import type { WorkspaceRow } from '../../server/modules/workspace/store';
import { verifyPassword } from '../../server/modules/whitelabel/password';
import { DEFAULT_PLAN_ID } from '../../server/modules/workspace/plans';

let t: TestServer;
let parent: TestWorkspace;
let counter = 0;
beforeAll(async () => {
  t = await startTestServer();
  parent = await t.createWorkspace({ name: 'Brightwave Agency', whitelabel: true });
});
afterAll(() => t.close());

const uniqueEmail = (prefix = 'sub') => `${prefix}.${++counter}@brightwave.io`;

async function register(ws: TestWorkspace, body: { email?: string; name?: string; password?: string } = {}) {
  const res = await ws.client.POST('/v2/whitelabel/register', {
    body: {
      email: body.email ?? uniqueEmail(),
      name: body.name ?? 'Maria Lopez',
      ...(body.password ? { password: body.password } : {}),
    },
  });
  expect(res.response.status).toBe(201);
  return res.data!.data;
}

async function createPlan(
  ws: TestWorkspace,
  limits: { perMin: number; perHour: number; perDay: number; perSecond?: number } = {
    perMin: 60,
    perHour: 1000,
    perDay: 10000,
  },
  credits = 500,
) {
  const res = await ws.client.POST('/v2/whitelabel/add-plan', { body: { name: 'Agency Pro', limits, credits } });
  expect(res.response.status).toBe(201);
  return res.data!.data.plan;
}

async function v2Error(res: Response) {
  const body = await readJson<ErrorBody>(res);
  expect(body.requestId).toBe(res.headers.get('x-request-id'));
  return { status: res.status, error: body.error, code: body.code, fields: body.details.map((d) => d.field) };
}

describe('whitelabel access', () => {
  it('answers 403 to a workspace without whitelabel, on every operation', async () => {
    const plain = await t.createWorkspace();
    const calls: [string, RequestInit][] = [
      ['/v2/whitelabel/register', { method: 'POST', body: JSON.stringify({ email: 'x@example.com', name: 'X' }) }],
      [
        '/v2/whitelabel/add-plan',
        { method: 'POST', body: JSON.stringify({ name: 'P', limits: { perMin: 20, perHour: 50, perDay: 100 } }) },
      ],
      [`/v2/whitelabel/get-plan?planId=${DEFAULT_PLAN_ID}`, {}],
      [`/v2/whitelabel/user/${plain.workspaceId}/assign-plan/${DEFAULT_PLAN_ID}`, { method: 'POST' }],
      ['/v2/whitelabel/user/x%40example.com', {}],
    ];
    for (const [path, init] of calls) {
      const res = await t.fetch(path, {
        ...init,
        apiKey: plain.apiKey,
        headers: { 'content-type': 'application/json' },
      });
      expect(await v2Error(res)).toEqual({
        status: 403,
        error: 'Whitelabel is not enabled for this workspace.',
        code: 'forbidden',
        fields: [],
      });
    }
    expect(Number((await t.db('plans').where({ owner_workspace_id: plain.workspaceId }).count('* as n'))[0].n)).toBe(0);
  });

  it('is not served under /v1', async () => {
    const res = await t.fetch('/v1/whitelabel/get-plan?planId=' + DEFAULT_PLAN_ID, { apiKey: parent.apiKey });
    expect(res.status).toBe(404);
  });
});

describe('POST /v2/whitelabel/register', () => {
  it('creates the user, its own workspace on the default plan with the starting grant, and a working API key', async () => {
    const { data, response } = await parent.client.POST('/v2/whitelabel/register', {
      body: { email: 'Maria.Lopez@Brightwave.io', name: 'Maria Lopez', password: 'correct-horse-battery-staple' },
    });
    expect(response.status).toBe(201);
    const { subUser, apiKey } = data!.data;
    expect(data!.message).toBe('Sub-user registered');
    expect(subUser).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'Maria.Lopez@Brightwave.io',
      name: 'Maria Lopez',
      workspaceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      planId: DEFAULT_PLAN_ID,
      planName: 'Default',
      limits: { perMin: 20, perHour: 50, perDay: 100, perSecond: null },
      creditBalance: 100,
      hasPassword: true,
      createdAt: '2026-11-23T10:00:00.000Z',
    });
    expect(JSON.stringify(data)).not.toContain('correct-horse');

    const ws = await t.db<WorkspaceRow>('workspaces').where({ id: subUser.workspaceId }).first();
    expect(ws).toMatchObject({
      parent_workspace_id: parent.workspaceId,
      whitelabel_enabled: false,
      name: 'Maria Lopez',
      plan_id: DEFAULT_PLAN_ID,
    });
    const ledger = await t
      .db('credit_ledger')
      .where({ workspace_id: subUser.workspaceId })
      .select('amount', 'balance_after', 'reason', 'reference');
    expect(ledger).toEqual([{ amount: 100, balance_after: 100, reason: 'plan_grant', reference: DEFAULT_PLAN_ID }]);

    const user = await t.db('users').where({ id: subUser.id }).first<{ password_hash: string }>('password_hash');
    expect(user.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('correct-horse-battery-staple', user.password_hash)).toBe(true);
    expect(await verifyPassword('wrong-password', user.password_hash)).toBe(false);

    const auth = await t.client(apiKey).GET('/v1/authenticate');
    expect(auth.data!.data.workspace).toEqual({ id: subUser.workspaceId, name: 'Maria Lopez' });
  });

  it('registers without a password', async () => {
    const { subUser } = await register(parent);
    expect(subUser.hasPassword).toBe(false);
    expect(
      (await t.db('users').where({ id: subUser.id }).first<{ password_hash: string | null }>('password_hash'))
        .password_hash,
    ).toBeNull();
  });

  it('answers 409 for an email already registered, compared case-insensitively, and creates nothing', async () => {
    const email = uniqueEmail('dup');
    await register(parent, { email });
    const before = Number((await t.db('workspaces').count('* as n'))[0].n);
    const res = await t.fetch('/v2/whitelabel/register', {
      method: 'POST',
      apiKey: parent.apiKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: email.toUpperCase(), name: 'Again' }),
    });
    expect(await v2Error(res)).toEqual({
      status: 409,
      error: 'A user with this email already exists.',
      code: 'conflict',
      fields: ['body.email'],
    });
    expect(Number((await t.db('workspaces').count('* as n'))[0].n)).toBe(before);
  });

  it('gives no signal about another workspace’s sub-users: the same email registers there as if unknown', async () => {
    const email = uniqueEmail('elsewhere');
    await register(parent, { email });
    const other = await t.createWorkspace({ whitelabel: true });
    const res = await other.client.POST('/v2/whitelabel/register', { body: { email, name: 'Elsewhere' } });
    expect(res.response.status).toBe(201);
  });

  it('lets exactly one of two concurrent registrations of one email through', async () => {
    const email = uniqueEmail('race');
    const before = Number((await t.db('workspaces').count('* as n'))[0].n);
    const results = await Promise.all(
      [0, 1].map(() => parent.client.POST('/v2/whitelabel/register', { body: { email, name: 'Racer' } })),
    );
    expect(results.map((r) => r.response.status).sort()).toEqual([201, 409]);
    expect(Number((await t.db('workspaces').count('* as n'))[0].n)).toBe(before + 1);
  });

  it('validates the body with field details', async () => {
    const cases: [unknown, string[]][] = [
      [{ email: 'not-an-email', name: 'X' }, ['body.email']],
      [{ email: 'a@example.com', name: 'X', password: 'short' }, ['body.password']],
      [{ email: 'a@example.com' }, ['body.name']],
      [{ email: 'a@example.com', name: 'X', role: 'admin' }, ['body.role']],
    ];
    for (const [body, fields] of cases) {
      const res = await t.fetch('/v2/whitelabel/register', {
        method: 'POST',
        apiKey: parent.apiKey,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const err = await v2Error(res);
      expect(err).toMatchObject({ status: 400, code: 'validation_error' });
      expect(err.fields).toEqual(fields);
    }
  });

  it('gives the sub-user a workspace that is not itself whitelabel', async () => {
    const { apiKey } = await register(parent);
    const res = await t.fetch('/v2/whitelabel/get-plan?planId=' + DEFAULT_PLAN_ID, { apiKey });
    expect(res.status).toBe(403);
  });
});

describe('POST /v2/whitelabel/add-plan and GET /v2/whitelabel/get-plan', () => {
  it('creates a plan and reads it back', async () => {
    const { data, response } = await parent.client.POST('/v2/whitelabel/add-plan', {
      body: {
        name: 'Agency Pro',
        limits: { perMin: 60, perHour: 1000, perDay: 10000, perSecond: 5 },
        credits: 5000,
        maxEmailAccounts: 10,
        maxContacts: 50000,
      },
    });
    expect(response.status).toBe(201);
    const plan = data!.data.plan;
    expect(plan).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Agency Pro',
      limits: { perMin: 60, perHour: 1000, perDay: 10000, perSecond: 5 },
      credits: 5000,
      maxEmailAccounts: 10,
      maxContacts: 50000,
      createdAt: '2026-11-23T10:00:00.000Z',
    });
    const read = await parent.client.GET('/v2/whitelabel/get-plan', { params: { query: { planId: plan.id } } });
    expect(read.data).toEqual({ status: 'success', success: true, message: 'Plan retrieved', data: { plan } });
  });

  it('defaults credits to 0 and caps to null', async () => {
    const { data } = await parent.client.POST('/v2/whitelabel/add-plan', {
      body: { name: 'Starter', limits: { perMin: 20, perHour: 50, perDay: 100 } },
    });
    expect(data!.data.plan).toMatchObject({
      credits: 0,
      maxEmailAccounts: null,
      maxContacts: null,
      limits: { perMin: 20, perHour: 50, perDay: 100, perSecond: null },
    });
  });

  it('refuses limits below the defaults or out of order', async () => {
    const cases: [Record<string, number>, string[]][] = [
      [{ perMin: 19, perHour: 50, perDay: 100 }, ['body.limits.perMin']],
      [{ perMin: 20, perHour: 49, perDay: 100 }, ['body.limits.perHour']],
      [{ perMin: 20, perHour: 50, perDay: 99 }, ['body.limits.perDay']],
      [{ perMin: 100, perHour: 60, perDay: 50000 }, ['body.limits.perHour']],
      [{ perMin: 100, perHour: 6000, perDay: 5000 }, ['body.limits.perDay']],
      [{ perMin: 20, perHour: 50, perDay: 100, perSecond: 21 }, ['body.limits.perSecond']],
    ];
    const before = Number((await t.db('plans').where({ owner_workspace_id: parent.workspaceId }).count('* as n'))[0].n);
    for (const [limits, fields] of cases) {
      const res = await t.fetch('/v2/whitelabel/add-plan', {
        method: 'POST',
        apiKey: parent.apiKey,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bad', limits }),
      });
      const err = await v2Error(res);
      expect(err).toMatchObject({ status: 400, code: 'validation_error', fields });
    }
    expect(Number((await t.db('plans').where({ owner_workspace_id: parent.workspaceId }).count('* as n'))[0].n)).toBe(
      before,
    );
  });

  it('answers the v2 message for out-of-order limits', async () => {
    const res = await t.fetch('/v2/whitelabel/add-plan', {
      method: 'POST',
      apiKey: parent.apiKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bad', limits: { perMin: 100, perHour: 60, perDay: 5000 } }),
    });
    expect((await readJson<ErrorBody>(res)).error).toBe(
      'Invalid plan limits: limits.perHour must be at least limits.perMin.',
    );
  });

  it('reads the default plan, but not another workspace plan nor an unknown one', async () => {
    const other = await t.createWorkspace({ whitelabel: true });
    const foreign = await createPlan(other);
    const def = await parent.client.GET('/v2/whitelabel/get-plan', { params: { query: { planId: DEFAULT_PLAN_ID } } });
    expect(def.data!.data.plan).toMatchObject({
      id: DEFAULT_PLAN_ID,
      name: 'Default',
      credits: 100,
      limits: { perMin: 20, perHour: 50, perDay: 100, perSecond: null },
    });
    for (const planId of [foreign.id, '0192f0c4-9a2b-7c3d-8e4f-5a6b7c8d9e0f']) {
      const res = await t.fetch(`/v2/whitelabel/get-plan?planId=${planId}`, { apiKey: parent.apiKey });
      expect(await v2Error(res)).toEqual({ status: 404, error: 'Plan not found.', code: 'not_found', fields: [] });
    }
    const bad = await t.fetch('/v2/whitelabel/get-plan?planId=nope', { apiKey: parent.apiKey });
    expect(await v2Error(bad)).toMatchObject({ status: 400, fields: ['query.planId'] });
  });
});

describe('POST /v2/whitelabel/user/{subUserId}/assign-plan/{planId}', () => {
  const assign = (ws: TestWorkspace, subUserId: string, planId: string) =>
    ws.client.POST('/v2/whitelabel/user/{subUserId}/assign-plan/{planId}', { params: { path: { subUserId, planId } } });

  it('moves the plan credits from the parent to the sub-user through the ledger, once', async () => {
    const parent = await t.createWorkspace({ whitelabel: true, credits: 6000 });
    const { subUser } = await register(parent);
    const plan = await createPlan(parent, { perMin: 60, perHour: 1000, perDay: 10000 }, 5000);
    const first = await assign(parent, subUser.id, plan.id);
    expect(first.response.status).toBe(200);
    expect(first.data!.data).toEqual({
      subUser: {
        ...subUser,
        planId: plan.id,
        planName: 'Agency Pro',
        limits: { perMin: 60, perHour: 1000, perDay: 10000, perSecond: null },
        creditBalance: 5100,
      },
      plan,
      creditsGranted: 5000,
    });
    const again = await assign(parent, subUser.id, plan.id);
    expect(again.data!.data).toMatchObject({ creditsGranted: 0, subUser: { creditBalance: 5100 } });
    const ledger = await t
      .db('credit_ledger')
      .where({ workspace_id: subUser.workspaceId })
      .orderBy('created_at')
      .orderBy('id')
      .select('amount', 'balance_after', 'reason', 'reference');
    expect(ledger).toEqual([
      { amount: 100, balance_after: 100, reason: 'plan_grant', reference: DEFAULT_PLAN_ID },
      { amount: 5000, balance_after: 5100, reason: 'plan_grant', reference: plan.id },
    ]);
    const parentLedger = await t
      .db('credit_ledger')
      .where({ workspace_id: parent.workspaceId, reason: 'plan_transfer' })
      .select('amount', 'balance_after', 'reference');
    expect(parentLedger).toEqual([{ amount: -5000, balance_after: 1000, reference: subUser.workspaceId }]);
  });

  it('creates no credits by switching plans back and forth, and answers 402 changing nothing when the parent lacks them', async () => {
    const parent = await t.createWorkspace({ whitelabel: true, credits: 25 });
    const { subUser } = await register(parent);
    const big = await createPlan(parent, { perMin: 60, perHour: 1000, perDay: 10000 }, 10);
    const other = await createPlan(parent, { perMin: 60, perHour: 1000, perDay: 10000 }, 10);
    const balances = async () =>
      Number(
        (
          await t.db('workspaces').whereIn('id', [parent.workspaceId, subUser.workspaceId]).sum('credit_balance as n')
        )[0].n,
      );
    const total = await balances();
    expect((await assign(parent, subUser.id, big.id)).response.status).toBe(200);
    expect((await assign(parent, subUser.id, other.id)).response.status).toBe(200);
    expect(await balances()).toBe(total);
    const refused = await assign(parent, subUser.id, big.id);
    expect(refused.response.status).toBe(402);
    expect(await balances()).toBe(total);
    const row = await t.db('workspaces').where({ id: subUser.workspaceId }).first<{ plan_id: string }>('plan_id');
    expect(row.plan_id).toBe(other.id);
  });

  it('makes the sub-user quota follow the plan from its next request', async () => {
    const { subUser, apiKey } = await register(parent);
    const plan = await createPlan(parent, { perMin: 22, perHour: 60, perDay: 100 }, 0);
    await assign(parent, subUser.id, plan.id);
    const sub = t.client(apiKey);
    const limits = await sub.GET('/v1/ratelimit/limits');
    expect(limits.data!.data.limits).toEqual({ perMin: 22, perHour: 60, perDay: 100, perSecond: null });
    // 1 request made above; 21 more fit the plan's minute (above the default 20); the 23rd is refused.
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 22; i++) {
      last = await t.fetch('/v1/ratelimit/limits', { apiKey });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 21).every((s) => s === 200)).toBe(true);
    expect(statuses[21]).toBe(429);
    expect(await last!.json()).toEqual({ error: 'Minute rate limit exceeded. Please try again in a minute.' });
  });

  it('enforces a plan per-second limit', async () => {
    const { subUser, apiKey } = await register(parent);
    const plan = await createPlan(parent, { perMin: 20, perHour: 50, perDay: 100, perSecond: 2 }, 0);
    await assign(parent, subUser.id, plan.id);
    // The test clock stands still, so these all fall in one second.
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.fetch('/v1/ratelimit/limits', { apiKey })).status);
    expect(statuses).toEqual([200, 200, 429]);
    t.clock.advance(1000);
    expect((await t.fetch('/v1/ratelimit/limits', { apiKey })).status).toBe(200);
  });

  it('moves a sub-user back to the default plan', async () => {
    const { subUser } = await register(parent);
    const plan = await createPlan(parent);
    await assign(parent, subUser.id, plan.id);
    const back = await assign(parent, subUser.id, DEFAULT_PLAN_ID);
    expect(back.data!.data).toMatchObject({
      creditsGranted: 100,
      subUser: { planId: DEFAULT_PLAN_ID, creditBalance: 700 },
    });
  });

  it('answers 404 for another workspace sub-user or plan, and changes nothing', async () => {
    const other = await t.createWorkspace({ whitelabel: true });
    const { subUser: foreignSub } = await register(other);
    const foreignPlan = await createPlan(other);
    const { subUser } = await register(parent);
    const plan = await createPlan(parent);
    const cases: [string, string, string][] = [
      [foreignSub.id, plan.id, 'Sub-user not found.'],
      [subUser.id, foreignPlan.id, 'Plan not found.'],
      [parent.workspaceId, plan.id, 'Sub-user not found.'],
    ];
    for (const [subUserId, planId, error] of cases) {
      const res = await t.fetch(`/v2/whitelabel/user/${subUserId}/assign-plan/${planId}`, {
        method: 'POST',
        apiKey: parent.apiKey,
      });
      expect(await v2Error(res)).toEqual({ status: 404, error, code: 'not_found', fields: [] });
    }
    const rows = await t
      .db('workspaces')
      .whereIn('id', [foreignSub.workspaceId, subUser.workspaceId])
      .select('plan_id', 'credit_balance');
    expect(rows).toEqual([
      { plan_id: DEFAULT_PLAN_ID, credit_balance: 100 },
      { plan_id: DEFAULT_PLAN_ID, credit_balance: 100 },
    ]);
  });

  it('validates the ids', async () => {
    const res = await t.fetch(`/v2/whitelabel/user/abc/assign-plan/${DEFAULT_PLAN_ID}`, {
      method: 'POST',
      apiKey: parent.apiKey,
    });
    expect(await v2Error(res)).toMatchObject({ status: 400, fields: ['path.subUserId'] });
  });
});

describe('GET /v2/whitelabel/user/{email}', () => {
  it('finds an own sub-user case-insensitively', async () => {
    const email = uniqueEmail('lookup');
    const { subUser } = await register(parent, { email });
    const { data, response } = await parent.client.GET('/v2/whitelabel/user/{email}', {
      params: { path: { email: email.toUpperCase() } },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual({ status: 'success', success: true, message: 'Sub-user retrieved', data: { subUser } });
  });

  it('does not find another workspace sub-user nor an unknown email', async () => {
    const other = await t.createWorkspace({ whitelabel: true });
    const email = uniqueEmail('foreign');
    await register(other, { email });
    for (const address of [email, 'nobody@example.com']) {
      const res = await t.fetch(`/v2/whitelabel/user/${encodeURIComponent(address)}`, { apiKey: parent.apiKey });
      expect(await v2Error(res)).toEqual({ status: 404, error: 'Sub-user not found.', code: 'not_found', fields: [] });
    }
  });

  it('validates the email', async () => {
    const res = await t.fetch('/v2/whitelabel/user/not-an-email', { apiKey: parent.apiKey });
    expect(await v2Error(res)).toMatchObject({ status: 400, fields: ['path.email'] });
  });
});
