/**
 * GET /v2/credits/ledger through HTTP: every grant and charge with what caused it (the operation and request id
 * of a key's request, the operator's command, the whitelabel parent), paged newest first by cursor; the
 * amounts sum to the balance after a mix of grants and charges; another workspace's rows never show.
 */
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { causeOutsideRequests, causing } from '../../server/platform/cause';
import { insertFixtures } from './people-search-fixtures';

jest.setTimeout(120_000);

let t: TestServer;
let parent: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
  parent = await t.createWorkspace({ whitelabel: true });
});
afterAll(() => t?.close());

type Entry = {
  amount: number;
  reason: string;
  actor: string | null;
  operation: string | null;
  requestId: string | null;
};

/** Every entry, read two at a time through the cursor, and the balance the first page answered. */
async function wholeLedger(ws: TestWorkspace) {
  const items: (Entry & { id: string; at: string; balanceAfter: number })[] = [];
  let cursor: string | undefined;
  let balance: number | undefined;
  do {
    const r = await ws.client.GET('/v2/credits/ledger', {
      params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } },
    });
    if (!r.data) throw new Error(`ledger: ${r.response.status} ${JSON.stringify(r.error)}`);
    balance ??= r.data.data.balance;
    items.push(...r.data.data.items);
    cursor = r.data.data.pagination.nextCursor ?? undefined;
    expect(r.data.data.pagination.hasMore).toBe(cursor !== undefined);
  } while (cursor);
  return { items, balance };
}

it('sums to the balance after grants and charges, each with the operation and request that caused it', async () => {
  // The operator's top-up, as the admin CLI's `credits add` runs it.
  await causing(causeOutsideRequests('admin', 'credits add'), () =>
    t.db.transaction((trx) => t.services.credits.grant(trx, parent.workspaceId, 25, 'admin_grant')),
  );
  const people = await parent.client.POST('/v2/mixed_people/search', { body: { titles: ['sales director'] } });
  expect(people.data!.data.credits.used).toBeGreaterThan(0);
  const companies = await parent.client.POST('/v1/company/find', { body: { dataOptions: ['full'] } });
  expect(companies.data!.data.credits.used).toBeGreaterThan(0);
  const again = await parent.client.POST('/v2/mixed_people/search', { body: { titles: ['sales director'] } });
  expect(again.data!.data.credits.used).toBe(0);

  const plan = await parent.client.POST('/v2/whitelabel/add-plan', {
    body: { name: 'Agency', limits: { perMin: 60, perHour: 1000, perDay: 10000 }, credits: 40 },
  });
  const registered = await parent.client.POST('/v2/whitelabel/register', {
    body: { email: 'maria@brightwave.io', name: 'Maria Lopez' },
  });
  const sub = registered.data!.data;
  const assigned = await parent.client.POST('/v2/whitelabel/user/{subUserId}/assign-plan/{planId}', {
    params: { path: { subUserId: sub.subUser.id, planId: plan.data!.data.plan.id } },
  });
  expect(assigned.response.status).toBe(200);

  const { items, balance } = await wholeLedger(parent);
  expect(items.reduce((n, e) => n + e.amount, 0)).toBe(balance);
  expect(items[0].balanceAfter).toBe(balance);
  const byOrder = [...items].reverse();
  expect(byOrder.map((e) => [e.reason, e.actor, e.operation])).toEqual([
    ['plan_grant', null, null],
    ['admin_grant', 'admin', 'credits add'],
    [expect.stringMatching(/^lead reveal/), 'key', 'searchPeopleV2'],
    [expect.stringMatching(/^company reveal/), 'key', 'findCompanies'],
    ['plan_transfer', 'key', 'assignPlan'],
  ]);
  expect(byOrder[2]).toMatchObject({
    amount: -people.data!.data.credits.used,
    requestId: people.response.headers.get('x-request-id'),
  });
  expect(byOrder[3].requestId).toBe(companies.response.headers.get('x-request-id'));
  expect(byOrder[4]).toMatchObject({ amount: -40, requestId: assigned.response.headers.get('x-request-id') });

  // The sub-user's own ledger: its starting grant and the plan's credits, given by its parent's key.
  const subLedger = await wholeLedger({ ...parent, client: t.client(sub.apiKey) });
  expect(subLedger.items.reduce((n, e) => n + e.amount, 0)).toBe(subLedger.balance);
  expect(subLedger.items[0]).toMatchObject({
    amount: 40,
    reason: 'plan_grant',
    actor: 'parent',
    operation: 'assignPlan',
    requestId: assigned.response.headers.get('x-request-id'),
  });
  expect(subLedger.items[1]).toMatchObject({ reason: 'plan_grant', actor: 'parent', operation: 'registerSubUser' });
  const theirIds = new Set(subLedger.items.map((e) => e.id));
  expect(items.some((e) => theirIds.has(e.id))).toBe(false);
});

it('refuses a cursor it did not give, and a key without credits:read', async () => {
  const bad = await parent.client.GET('/v2/credits/ledger', { params: { query: { cursor: 'nope' } } });
  expect(bad.response.status).toBe(400);
  expect(bad.error).toMatchObject({
    code: 'validation_error',
    details: [expect.objectContaining({ field: 'query.cursor' })],
  });
  const spender = await parent.client.POST('/v2/api-key/create', {
    body: { name: 'Search', scopes: ['credits:spend'] },
  });
  const refused = await t.client(spender.data!.data.apiKey).GET('/v2/credits/ledger', { params: { query: {} } });
  expect(refused.response.status).toBe(403);
  expect(refused.error).toMatchObject({ code: 'insufficient_scope' });
});
