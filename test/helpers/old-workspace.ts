import type { Knex } from 'knex';
import { newId } from '../../server/platform/ids';
import type { PlanRow } from '../../server/modules/workspace/store';
import { found } from './rows';

/**
 * For a migration's test on a database before it: a workspace (in Asia/Kolkata unless `timezone` says) with one
 * active campaign and two contacts, written straight into the tables, and `event` to build its campaign's email_events rows.
 */
export async function oldWorkspace(db: Knex, timezone = 'Asia/Kolkata') {
  const at = new Date('2026-11-20T10:00:00Z');
  const workspaceId = newId();
  const campaignId = newId();
  const [k1, k2] = [newId(), newId()];
  const { id: planId } = await found(db('plans').first<Pick<PlanRow, 'id'> | undefined>('id'), 'plan');
  await db('workspaces').insert({ id: workspaceId, name: 'Old', plan_id: planId, timezone, created_at: at });
  await db('campaigns').insert({
    id: campaignId,
    workspace_id: workspaceId,
    name: 'Old campaign',
    status: 'active',
    created_at: at,
    updated_at: at,
  });
  await db('contacts').insert(
    [k1, k2].map((id) => ({
      id,
      workspace_id: workspaceId,
      campaign_id: campaignId,
      email: `${id}@lead.io`,
      status: 'active',
      created_at: at,
      updated_at: at,
    })),
  );
  const event = (type: string, contactId: string | null, when: string, more: object = {}) => ({
    id: newId(),
    workspace_id: workspaceId,
    campaign_id: campaignId,
    contact_id: contactId,
    type,
    occurred_at: new Date(when),
    ...more,
  });
  return { workspaceId, campaignId, k1, k2, event };
}
