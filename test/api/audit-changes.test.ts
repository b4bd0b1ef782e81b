/**
 * Audit entries written in the transaction of the change they record: a key change's or a campaign rename's
 * entry commits with it or not at all (one entry per request, none added after); a whitelabel parent's changes show in the
 * sub-user's log as `parent`; the admin CLI's as `admin` with the command.
 */
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { causeOutsideRequests, causing } from '../../server/platform/cause';

jest.setTimeout(120_000);

let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace({ whitelabel: true });
});
afterAll(() => t?.close());

async function entries(client: TestWorkspace['client'], operation?: string) {
  const r = await client.GET('/v2/audit/list', {
    params: { query: { limit: 100, ...(operation ? { operation } : {}) } },
  });
  if (!r.data) throw new Error(`audit/list: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data.data.items;
}

it('a change and its entry commit together: one entry per request, and none without the change', async () => {
  const created = await ws.client.POST('/v2/api-key/create', { body: { name: 'Sync', scopes: ['campaigns:read'] } });
  const requestId = created.response.headers.get('x-request-id');
  const own = (await entries(ws.client, 'createApiKey')).filter((e) => e.requestId === requestId);
  expect(own).toMatchObject([
    { actor: 'key', keyId: ws.keyId, outcome: 200, targetIds: [created.data!.data.key.id], fields: ['name', 'scopes'] },
  ]);

  // Any operation whose change is a transaction writes its entry in it: once, with the request's outcome.
  const campaign = await ws.client.POST('/v2/campaign/create', { body: { name: 'Before' } });
  const campaignId = campaign.data!.data.campaign.id;
  const renamed = await ws.client.POST('/v1/campaign/set/name', { body: { campaignId, name: 'After' } });
  expect(renamed.response.status).toBe(200);
  expect(
    (await entries(ws.client, 'setCampaignName')).filter(
      (e) => e.requestId === renamed.response.headers.get('x-request-id'),
    ),
  ).toMatchObject([{ outcome: 200, targetIds: [campaignId], fields: ['campaignId', 'name'] }]);

  // An entry that cannot be written takes the change with it.
  await t.db.raw(`CREATE FUNCTION audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit refused'; END $$`);
  await t.db.raw(
    'CREATE TRIGGER audit_refuse BEFORE INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION audit_refuse()',
  );
  try {
    const refused = await ws.client.POST('/v2/api-key/create', { body: { name: 'Never', scopes: ['campaigns:read'] } });
    expect(refused.response.status).toBe(500);
    const notRenamed = await ws.client.POST('/v1/campaign/set/name', { body: { campaignId, name: 'Never' } });
    expect(notRenamed.response.status).toBe(500);
  } finally {
    await t.db.raw('DROP TRIGGER audit_refuse ON audit_entries');
    await t.db.raw('DROP FUNCTION audit_refuse()');
  }
  expect(await t.db('api_keys').where({ workspace_id: ws.workspaceId, name: 'Never' })).toEqual([]);
  expect(await t.db('campaigns').where({ id: campaignId }).first()).toMatchObject({ name: 'After' });
});

it("a whitelabel parent's changes show in the sub-user's log as parent, and in its own as key", async () => {
  const registered = await ws.client.POST('/v2/whitelabel/register', {
    body: { email: 'ana@brightwave.io', name: 'Ana' },
  });
  const sub = registered.data!.data;
  const plan = await ws.client.POST('/v2/whitelabel/add-plan', {
    body: { name: 'Lite', limits: { perMin: 30, perHour: 100, perDay: 200 }, credits: 0 },
  });
  const planId = plan.data!.data.plan.id;
  const assigned = await ws.client.POST('/v2/whitelabel/user/{subUserId}/assign-plan/{planId}', {
    params: { path: { subUserId: sub.subUser.id, planId } },
  });
  expect(assigned.response.status).toBe(200);

  const subLog = await entries(t.client(sub.apiKey));
  expect(subLog.map((e) => [e.operation, e.actor, e.keyId])).toEqual(
    expect.arrayContaining([
      ['registerSubUser', 'parent', ws.keyId],
      ['assignPlan', 'parent', ws.keyId],
    ]),
  );
  expect(subLog.find((e) => e.operation === 'assignPlan')!.requestId).toBe(
    assigned.response.headers.get('x-request-id'),
  );
  for (const [operation, answer] of [
    ['registerSubUser', registered],
    ['createPlan', plan],
    ['assignPlan', assigned],
  ] as const) {
    const own = (await entries(ws.client, operation)).filter(
      (e) => e.requestId === answer.response.headers.get('x-request-id'),
    );
    expect(own).toMatchObject([{ actor: 'key', keyId: ws.keyId, outcome: 201 === answer.response.status ? 201 : 200 }]);
  }
});

it("the admin CLI's changes are the operator's, named by the command", async () => {
  const created = await ws.client.POST('/v2/api-key/create', { body: { name: 'Leaked', scopes: ['campaigns:read'] } });
  const keyId = created.data!.data.key.id;
  await causing(causeOutsideRequests('admin', 'key revoke'), () => t.services.workspaces.revokeKey(keyId));
  const [entry] = (await entries(ws.client)).filter((e) => e.operation === 'key revoke');
  expect(entry).toMatchObject({ actor: 'admin', keyId: null, targetIds: [keyId], outcome: 200, requestId: null });
  const other = await t.createWorkspace();
  expect((await entries(other.client)).filter((e) => e.targetIds.includes(keyId))).toEqual([]);
});
