/** Arrangements shared by the contact test files. */
import { newId } from '../../server/platform/ids';
import type { ContactRow } from '../../server/modules/contact/store';
import type { TestServer, TestWorkspace } from '../helpers/server';

/** A draft campaign of the workspace, inserted directly (campaign creation is another module's). */
export async function addCampaign(t: TestServer, ws: TestWorkspace): Promise<string> {
  const id = newId();
  const now = t.clock.now();
  await t.db('campaigns').insert({
    id,
    workspace_id: ws.workspaceId,
    name: `Campaign ${id.slice(-4)}`,
    status: 'draft',
    created_at: now,
    updated_at: now,
  });
  return id;
}

/** A campaign's contact rows, oldest first. */
export function contactRows(t: TestServer, campaignId: string): Promise<ContactRow[]> {
  return t.db<ContactRow>('contacts').where({ campaign_id: campaignId }).orderBy('id');
}

/** A raw JSON POST, for bodies the typed client would refuse. */
export function post(t: TestServer, ws: TestWorkspace, path: string, body: unknown): Promise<Response> {
  return t.fetch(path, {
    method: 'POST',
    apiKey: ws.apiKey,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Checks a /v2 error body exactly (details included). */
export async function expectV2Error(
  res: Response,
  status: number,
  code: string,
  error: string,
  details: unknown[],
): Promise<void> {
  expect(res.status).toBe(status);
  expect(await res.json()).toEqual({
    error,
    code,
    statusCode: status,
    requestId: res.headers.get('x-request-id'),
    details,
  });
}
