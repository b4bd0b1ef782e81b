/**
 * POST /v2/contact/bulk: a filter's contacts as a contactBulk job that the worker applies (driven by runOnce),
 * each contact reported in the results; the same Idempotency-Key answers the same job.
 */
import { expect } from '@jest/globals';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { addCampaign } from './contact.helpers';

let t: TestServer;
let ws: TestWorkspace;
let campaign: string;
let elsewhere: string;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
  campaign = await addCampaign(t, ws);
  elsewhere = await addCampaign(t, ws);
  const contacts = Array.from({ length: 6 }, (_, i) => ({ email: `lead${i}@acme.com` }));
  await ws.client.POST('/v1/contact/add', { body: { campaignId: campaign, contacts } });
  await ws.client.POST('/v1/contact/add', { body: { campaignId: elsewhere, contacts: [{ email: 'lead0@acme.com' }] } });
  // Interested: lead0-3 of the campaign and lead0 elsewhere; lead3 is already paused, lead2 unsubscribed.
  for (const email of ['lead0@acme.com', 'lead1@acme.com', 'lead2@acme.com', 'lead3@acme.com'])
    await ws.client.POST('/v1/contact/update/status', {
      body: { campaignId: campaign, email, leadStatus: 'interested' },
    });
  await ws.client.POST('/v2/contact/pause', { body: { campaignId: campaign, emails: ['lead3@acme.com'] } });
  await t.db('contacts').where({ campaign_id: campaign, email: 'lead2@acme.com' }).update({ status: 'unsubscribed' });
});
afterAll(() => t.close());

async function drain(): Promise<void> {
  while ((await t.services.jobs.runOnce()) > 0);
}

const statuses = async (campaignId: string) =>
  Object.fromEntries(
    (await t.db('contacts').where({ campaign_id: campaignId }).select('email', 'status')).map(
      (r: { email: string; status: string }) => [r.email, r.status],
    ),
  );

describe('POST /v2/contact/bulk', () => {
  it('pauses exactly the filtered contacts and reports each one', async () => {
    const headers = { 'Idempotency-Key': 'pause-interested-1' };
    const body = { filter: { campaignId: campaign, leadStatus: 'interested' as const }, action: 'pause' as const };
    const accepted = await ws.client.POST('/v2/contact/bulk', { body, params: { header: headers } });
    expect(accepted.response.status).toBe(202);
    const job = accepted.data!.data.job;
    expect(job).toMatchObject({
      type: 'contactBulk',
      status: 'queued',
      progress: { total: 4, processed: 0 },
      contactBulk: body,
    });
    const again = await ws.client.POST('/v2/contact/bulk', { body, params: { header: headers } });
    expect(again.data!.data.job.id).toBe(job.id);

    await drain();
    const done = await ws.client.GET('/v2/job/get', { params: { query: { jobId: job.id } } });
    expect(done.data!.data.job).toMatchObject({
      status: 'completed',
      progress: { total: 4, processed: 4 },
      counts: { changed: 2, skipped: 2 },
    });
    expect(await statuses(campaign)).toEqual({
      'lead0@acme.com': 'paused',
      'lead1@acme.com': 'paused',
      'lead2@acme.com': 'unsubscribed',
      'lead3@acme.com': 'paused',
      'lead4@acme.com': 'active',
      'lead5@acme.com': 'active',
    });
    expect(await statuses(elsewhere)).toEqual({ 'lead0@acme.com': 'active' });

    const results = await t.fetch(`/v2/job/results?jobId=${job.id}`, { apiKey: ws.apiKey });
    const lines = (await results.text()).trim().split('\n');
    expect(lines[0]).toBe('row,contactId,email,outcome,reason,existingContactId');
    expect(lines.slice(1).map((l) => l.split(',').slice(2, 5).join(','))).toEqual([
      'lead0@acme.com,changed,',
      'lead1@acme.com,changed,',
      'lead2@acme.com,skipped,unsubscribed',
      'lead3@acme.com,skipped,alreadyPaused',
    ]);
  });

  it('moves and sets the lead status by filter; a filter that selects nothing completes at once', async () => {
    const move = await ws.client.POST('/v2/contact/bulk', {
      body: { filter: { campaignId: campaign, search: 'lead4@' }, action: 'move', toCampaignId: elsewhere },
    });
    expect(move.response.status).toBe(202);
    const lead = await ws.client.POST('/v2/contact/bulk', {
      body: { filter: { campaignId: elsewhere }, action: 'setLeadStatus', leadStatus: 'closed' },
    });
    await drain();
    expect(await statuses(elsewhere)).toEqual({ 'lead0@acme.com': 'active', 'lead4@acme.com': 'active' });
    const closed = await t.db('contacts').where({ campaign_id: elsewhere }).pluck('lead_status');
    // The lead status job selected lead0 only: lead4 moved in after it was accepted.
    expect(closed.sort()).toEqual(['closed', null]);
    expect(lead.data!.data.job.progress.total).toBe(1);

    const none = await ws.client.POST('/v2/contact/bulk', {
      body: { filter: { campaignId: campaign, search: 'nobody' }, action: 'delete' },
    });
    expect(none.data!.data.job).toMatchObject({ status: 'completed', progress: { total: 0, processed: 0 } });
  });

  it("answers 400 for a missing or foreign field of the action, 404 for another workspace's campaign", async () => {
    const missing = await ws.client.POST('/v2/contact/bulk', { body: { filter: {}, action: 'move' } });
    expect(missing.response.status).toBe(400);
    expect(missing.error).toMatchObject({ details: [{ field: 'body.toCampaignId', code: 'required' }] });
    const foreign = await ws.client.POST('/v2/contact/bulk', {
      body: { filter: {}, action: 'pause', leadStatus: 'closed' },
    });
    expect(foreign.response.status).toBe(400);
    const other = await t.createWorkspace();
    const theirs = await other.client.POST('/v2/contact/bulk', {
      body: { filter: { campaignId: campaign }, action: 'delete' },
    });
    expect(theirs.response.status).toBe(404);
  });
});
