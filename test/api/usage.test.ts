/**
 * GET /v2/usage through HTTP: the credit balance and the deployment's reveal prices, each quota window with this request counted, today's sends
 * per account and in total, contacts, accounts and lists against the plan's caps; another workspace's figures
 * never mix in, and a key without usage:read is refused.
 */
import { expect } from '@jest/globals';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { recordMailEvents } from '../helpers/mail-events';
import { insertAccount } from './campaign-helpers';

jest.setTimeout(120_000);

let t: TestServer;
let ws: TestWorkspace;
let other: TestWorkspace;
// Prices other than the defaults, so the answer is seen to come from the settings.
const creditCosts = { workEmailReveal: 2, fullContactAndCompany: 3, mobilePhoneReveal: 7, companyFull: 4 };
beforeAll(async () => {
  t = await startTestServer({ config: { creditCosts } });
  ws = await t.createWorkspace({ defaultPlan: true });
  other = await t.createWorkspace({ defaultPlan: true });
});
afterAll(() => t?.close());

async function usage(client = ws.client) {
  const r = await client.GET('/v2/usage');
  if (!r.data) throw new Error(`usage: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data.data;
}

it('answers the balance and prices, the quota windows with this request counted, and the plan', async () => {
  const first = await usage();
  expect(first.plan).toEqual({ id: '00000000-0000-7000-8000-000000000001', name: 'Default' });
  expect(first.credits).toEqual({ balance: 100, prices: creditCosts });
  expect(first.at).toBe(t.clock.now().toISOString());
  const used = (u: typeof first) => Object.fromEntries(u.quota.map((w) => [w.window, [w.used, w.limit, w.remaining]]));
  const n = first.quota[0].used;
  expect(used(first)).toEqual({ minute: [n, 20, 20 - n], hour: [n, 50, 50 - n], day: [n, 100, 100 - n] });
  expect(first.quota.map((w) => w.seconds)).toEqual([60, 3600, 86400]);
  expect(used(await usage())).toMatchObject({ minute: [n + 1, 20, 19 - n] });
});

it("counts today's sends per account in the workspace's day, and the contacts, accounts and lists held", async () => {
  const a = await insertAccount(t, ws.workspaceId, { daily_limit: 40 });
  const b = await insertAccount(t, ws.workspaceId);
  const foreign = await insertAccount(t, other.workspaceId);
  const now = t.clock.now();
  const yesterday = new Date(now.getTime() - 86_400_000 * 2);
  await recordMailEvents(t, ws.workspaceId, [
    { type: 'sent', accountId: a, at: now },
    { type: 'sent', accountId: a, at: now },
    { type: 'sent', accountId: b, at: now },
    { type: 'sent', accountId: a, at: yesterday },
  ]);
  await recordMailEvents(t, other.workspaceId, [{ type: 'sent', accountId: foreign, at: now }]);
  expect((await ws.client.POST('/v2/list/create/people', { body: { name: 'Founders' } })).response.status).toBe(201);

  const u = await usage();
  expect(u.sends).toMatchObject({ timezone: 'UTC', sent: 3, warmupSent: 0 });
  expect(u.sends.accounts).toEqual([
    { accountId: a, email: expect.any(String), sent: 2, warmupSent: 0, dailyLimit: 40 },
    { accountId: b, email: expect.any(String), sent: 1, warmupSent: 0, dailyLimit: 50 },
  ]);
  expect(u.emailAccounts).toEqual({ used: 2, limit: null });
  expect(u.lists).toEqual({ used: 1, limit: null });
  expect(u.contacts).toEqual({ used: 0, limit: null });

  const theirs = await usage(other.client);
  expect(theirs.sends.accounts.map((x) => x.accountId)).toEqual([foreign]);
  expect(theirs.lists.used).toBe(0);
});

it("reads the plan's caps", async () => {
  await t.db('plans').insert({
    id: '00000000-0000-7000-8000-0000000000c1',
    name: 'Capped',
    per_min: 20,
    per_hour: 50,
    per_day: 100,
    credits: 0,
    max_contacts: 500,
    max_email_accounts: 3,
    created_at: t.clock.now(),
  });
  await t.db('workspaces').where({ id: other.workspaceId }).update({ plan_id: '00000000-0000-7000-8000-0000000000c1' });
  const u = await usage(other.client);
  expect(u.plan.name).toBe('Capped');
  expect(u.contacts).toEqual({ used: 0, limit: 500 });
  expect(u.emailAccounts).toEqual({ used: 1, limit: 3 });
});

it('needs usage:read', async () => {
  const created = await ws.client.POST('/v2/api-key/create', {
    body: { name: 'Campaigns only', scopes: ['campaigns:read'] },
  });
  const refused = await t.client(created.data!.data.apiKey).GET('/v2/usage');
  expect(refused.response.status).toBe(403);
  expect(refused.error).toMatchObject({ code: 'insufficient_scope' });
  const allowed = await ws.client.POST('/v2/api-key/create', { body: { name: 'Usage', scopes: ['usage:read'] } });
  expect((await t.client(allowed.data!.data.apiKey).GET('/v2/usage')).response.status).toBe(200);
});
