/**
 * POST /v2/campaign/delete: the campaign is a 404 everywhere from then on and the engine sends nothing more for it,
 * while its mail stays in the unibox and its events in the feed. Time moves by the test clock.
 */
import { expect } from '@jest/globals';
import { newId } from '../../server/platform/ids';
import type { MessageRow } from '../../server/modules/mail';
import { readJson, type ErrorBody } from '../helpers/bodies';
import { found } from '../helpers/rows';
import {
  closeSendingWorkspace,
  draftCampaign,
  startSendingWorkspace,
  startWeek,
  type SendingWorkspace,
} from '../helpers/sending-workspace';

let s: SendingWorkspace;
beforeAll(async () => {
  s = await startSendingWorkspace({ email: 'sdr@acme-mail.io', dailyLimit: 100, config: {} });
});
afterAll(() => closeSendingWorkspace(s));

const DAY = 24 * 3600_000;

async function call(method: string, path: string, body?: unknown, apiKey = s.ws.apiKey) {
  const res = await s.t.fetch(path, {
    method,
    apiKey,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await readJson<ErrorBody>(res) };
}

/** A launched two-step campaign whose first step went to three contacts. */
async function sentCampaign(week: number) {
  const monday = startWeek(s, week);
  const campaignId = await draftCampaign(s, `Deleted ${week}`);
  const { ws } = s;
  await ws.client.POST('/v2/campaign/sequence-create', {
    body: {
      campaignId,
      steps: [
        { delayDays: 0, variants: [{ subject: 'Hi {{firstName}}', body: 'First.' }] },
        { delayDays: 1, variants: [{ subject: '', body: 'Second.' }] },
      ],
    },
  });
  const contacts = ['ann', 'bob', 'cy'].map((n) => ({ email: `${n}${week}@globex.test`, firstName: n }));
  await ws.client.POST('/v1/contact/add', { body: { campaignId, contacts } });
  expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);
  expect(await s.t.services.sending.runOnce()).toBe(3);
  return { campaignId, monday };
}

describe('POST /v2/campaign/delete', () => {
  it('stops sending; the campaign answers 404 everywhere; its mail and events stay', async () => {
    const { campaignId, monday } = await sentCampaign(0);
    const deleted = await s.ws.client.POST('/v2/campaign/delete', { body: { campaignId } });
    expect(deleted.response.status).toBe(200);
    expect(deleted.data!.data).toEqual({
      campaignId,
      name: 'Deleted 0',
      deletedAt: new Date(monday).toISOString(),
    });

    // Nothing more leaves: the second step comes due a day later and is not sent.
    s.t.clock.set(new Date(monday + 2 * DAY));
    expect(await s.t.services.sending.runOnce()).toBe(0);
    expect(s.sink.received).toHaveLength(3);

    // Every read and write naming it is a 404, and the list leaves it out.
    const missing = [
      ['GET', `/v2/campaign/get?campaignId=${campaignId}`],
      ['GET', `/v1/campaign/get/name?campaignId=${campaignId}`],
      ['GET', `/v2/campaign/get/status?campaignId=${campaignId}`],
      ['GET', `/v1/campaign/get/accounts?campaignId=${campaignId}`],
      ['GET', `/v2/campaign/sending-status?campaignId=${campaignId}`],
      ['GET', `/v2/subsequence/list?campaignId=${campaignId}`],
      ['GET', `/v1/analytics/campaign/summary?campaignId=${campaignId}`],
      ['GET', `/v2/analytics/campaign/steps?campaignId=${campaignId}`],
      ['POST', '/v1/campaign/set/name', { campaignId, name: 'Back' }],
      ['POST', '/v2/campaign/launch', { campaignId }],
      ['POST', '/v2/campaign/pause', { campaignId }],
      ['POST', '/v2/campaign/duplicate', { campaignId }],
      ['POST', '/v2/campaign/delete', { campaignId }],
      ['POST', '/v1/contact/add', { campaignId, contacts: [{ email: 'late@globex.test' }] }],
    ] as const;
    for (const [method, path, body] of missing) {
      const res = await call(method, path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    const list = await s.ws.client.GET('/v1/campaign/list', { params: { query: { limit: 100 } } });
    expect(list.data!.data.items.map((c) => c.id)).not.toContain(campaignId);

    // The unibox still has its mail, and a reply to it arriving now; the feed keeps its events.
    const sent = await found(
      s.t
        .db('email_messages')
        .where({ campaign_id: campaignId, direction: 'outbound' })
        .first<MessageRow | undefined>(),
      'sent message',
    );
    const replyId = newId();
    await s.t.db('email_messages').insert({
      id: replyId,
      workspace_id: s.ws.workspaceId,
      account_id: s.account,
      campaign_id: campaignId,
      contact_id: sent.contact_id,
      thread_id: sent.thread_id,
      references: [],
      direction: 'inbound',
      kind: 'reply',
      message_id: `<${replyId}@globex.test>`,
      in_reply_to: sent.message_id,
      from_address: sent.to_address,
      to_address: 'sdr@acme-mail.io',
      subject: 'Re: Hi',
      text_body: 'Tell me more',
      status: 'received',
      received_at: s.t.clock.now(),
      created_at: s.t.clock.now(),
    });
    const unibox = await s.ws.client.GET('/v2/email/list', { params: { query: { limit: 50 } } });
    expect(unibox.response.status).toBe(200);
    expect(unibox.data!.data.items.map((m) => m.id)).toContain(replyId);
    const reply = await s.ws.client.GET('/v2/email/get', { params: { query: { id: replyId } } });
    expect(reply.response.status).toBe(200);
    const feed = await s.ws.client.GET('/v2/event/list', {
      params: { query: { types: ['email.sent', 'campaign.deleted'], limit: 100 } },
    });
    const ofCampaign = feed.data!.data.items.filter(
      (e) => (e.data as { campaignId?: string }).campaignId === campaignId,
    );
    expect(ofCampaign.map((e) => e.type)).toEqual(['email.sent', 'email.sent', 'email.sent', 'campaign.deleted']);
  });

  it('answers 404 for another workspace’s campaign and leaves it as it was', async () => {
    const { campaignId } = await sentCampaign(1);
    const other = await s.t.createWorkspace();
    expect((await call('POST', '/v2/campaign/delete', { campaignId }, other.apiKey)).status).toBe(404);
    const still = await s.ws.client.GET('/v2/campaign/get', { params: { query: { campaignId } } });
    expect(still.data!.data.campaign.status).toBe('active');
  });
});
