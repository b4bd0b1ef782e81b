/** Arrangement helpers shared by the campaign test files. */
import { newId } from '../../server/platform/ids';
import { readJson, type ErrorBody } from '../helpers/bodies';
import type { TestServer, TestWorkspace } from '../helpers/server';

let accounts = 0;

/** Inserts an email account row (accounts are connected by another module; tests arrange them directly). */
export async function insertAccount(
  t: TestServer,
  workspaceId: string,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  accounts += 1;
  const id = newId();
  await t.db('email_accounts').insert({
    id,
    workspace_id: workspaceId,
    email: `sender${accounts}@acme-mail.io`,
    provider: 'google',
    status: 'active',
    daily_limit: 50,
    created_at: t.clock.now(),
    updated_at: t.clock.now(),
    ...overrides,
  });
  return id;
}

export async function createCampaign(ws: TestWorkspace, body: Record<string, unknown> = {}) {
  const { data, response, error } = await ws.client.POST('/v2/campaign/create', {
    body: { name: 'Q4 founders', ...body } as never,
  });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data.campaign;
}

export const schedule = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };

export const opener = { subject: 'Hi {{firstName | there}}', body: 'Saw {{companyName}} is hiring.' };

/** A campaign that can be launched: a step, an active account and a schedule. */
export async function readyCampaign(t: TestServer, ws: TestWorkspace) {
  const accountId = await insertAccount(t, ws.workspaceId);
  const campaign = await createCampaign(ws, { schedule, accountIds: [accountId] });
  const res = await ws.client.POST('/v2/campaign/sequence-create', {
    body: { campaignId: campaign.id, steps: [{ delayDays: 0, variants: [opener] }] },
  });
  if (res.response.status !== 201) throw new Error(`sequence-create failed: ${JSON.stringify(res.error)}`);
  return { campaign, accountId, steps: res.data!.data.steps };
}

/**
 * POST/GET/DELETE raw JSON, for bodies the typed client refuses and for the v2 error shape. The body is read as
 * an error body unless the test names the success body it expects (`raw<Success<path, method>>`).
 */
export async function raw<T = ErrorBody>(
  t: TestServer,
  ws: TestWorkspace,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await t.fetch(path, {
    method,
    apiKey: ws.apiKey,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await readJson<T>(res) };
}
