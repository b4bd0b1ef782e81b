/** GET /v2/campaign/get, POST /v2/campaign/duplicate and GET /v2/account/get: what was written reads back whole. */
import { expect } from '@jest/globals';
import { createClient } from '../../client';
import type { components } from '../../generated/api';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { createCampaign, insertAccount, raw, schedule } from './campaign-helpers';

type CampaignDetail = components['schemas']['CampaignDetail'];

let t: TestServer;
let ws: TestWorkspace;
let other: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
  other = await t.createWorkspace();
});
afterAll(() => t.close());

const MISSING = '0192f0c4-0000-7000-8000-000000000000';
const options = { dailyLimit: 120, stopOnOpen: true, sendPriority: 'followUps', cc: ['sales@acme.test'] } as const;
const autoWinner = { metric: 'replied', minSentPerVariant: 50, decideAfterHours: 24 } as const;

/** A draft with two steps (the first an A/B test with an A/Z rule), two subsequences and two accounts. */
async function fullCampaign() {
  const accountIds = [await insertAccount(t, ws.workspaceId), await insertAccount(t, ws.workspaceId)];
  const campaign = await createCampaign(ws, { schedule, options, accountIds });
  const created = await ws.client.POST('/v2/campaign/sequence-create', {
    body: {
      campaignId: campaign.id,
      steps: [
        {
          delayDays: 0,
          autoWinner,
          variants: [
            { subject: 'Hi {{firstName | there}}', body: 'Saw {{companyName}} is hiring.' },
            { subject: '{{companyName}} and outbound', body: 'A short one, {{firstName}}.' },
          ],
        },
        { delay: { value: 6, unit: 'hours' }, variants: [{ subject: '', body: 'Bumping this.' }] },
      ],
    },
  });
  expect(created.response.status).toBe(201);
  const steps = created.data!.data.steps;
  const opened = await ws.client.POST('/v2/subsequence/create', {
    body: {
      campaignId: campaign.id,
      name: 'Opened, no reply',
      trigger: { type: 'opened', stepId: steps[0].id },
      steps: [{ delay: { value: 1, unit: 'days' }, variants: [{ subject: '', body: 'Saw you had a look.' }] }],
    },
  });
  const notNow = await ws.client.POST('/v2/subsequence/create', {
    body: {
      campaignId: campaign.id,
      name: 'Not now',
      trigger: { type: 'replyIntent', intent: 'notInterested' },
      steps: [{ delay: { value: 30, unit: 'days' }, variants: [{ subject: '', body: 'Checking back.' }] }],
    },
  });
  const paused = await ws.client.POST('/v2/subsequence/pause', {
    body: { subsequenceId: notNow.data!.data.subsequence.id },
  });
  expect(paused.response.status).toBe(200);
  return { campaign, steps, accountIds, subsequences: [opened.data!.data.subsequence, paused.data!.data.subsequence] };
}

/** The campaign without what a copy makes anew (ids, times, names). */
const shape = (c: CampaignDetail) => ({
  schedule: c.schedule,
  options: c.options,
  counts: c.counts,
  sequence: c.sequence.map(({ order, delay, delayDays, autoWinner: rule, variants }) => ({
    order,
    delay,
    delayDays,
    rule,
    variants: variants.map(({ id: _id, ...v }) => v),
  })),
  subsequences: c.subsequences.map(({ id: _id, trigger: { stepId: _s, ...trigger }, ...s }) => ({ ...s, trigger })),
  accounts: c.accounts.map(({ linkedAt: _l, ...a }) => a),
});

describe('GET /v2/campaign/get', () => {
  it('reads the campaign whole: sequence as the step operations answered it, subsequences, accounts, options', async () => {
    const { campaign, steps, accountIds, subsequences } = await fullCampaign();
    const { data, response } = await ws.client.GET('/v2/campaign/get', {
      params: { query: { campaignId: campaign.id } },
    });
    expect(response.status).toBe(200);
    const read = data!.data.campaign;
    expect(read).toMatchObject({ id: campaign.id, name: campaign.name, status: 'draft', schedule: campaign.schedule });
    expect(read.options).toMatchObject(options);
    expect(read.counts).toEqual({ steps: 2, accounts: 2, contacts: 0 });
    expect(read.sequence).toEqual(steps);
    expect(read.sequence[0].autoWinner).toEqual(autoWinner);
    expect(read.subsequences).toEqual(
      subsequences.map(({ id, name, status, trigger }) => ({ id, name, status, trigger })),
    );
    expect(read.subsequences.map((s) => s.status)).toEqual(['active', 'paused']);
    expect(read.accounts.map((a) => a.id)).toEqual(accountIds);
    expect(read.accounts[0]).toMatchObject({ provider: 'google', status: 'active', dailyLimit: 50 });
  });

  it('answers 404 for another workspace and a missing campaign, 400 for a malformed id', async () => {
    const theirs = await createCampaign(other);
    for (const campaignId of [theirs.id, MISSING]) {
      const res = await raw(t, ws, 'GET', `/v2/campaign/get?campaignId=${campaignId}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await raw(t, ws, 'GET', '/v2/campaign/get?campaignId=nope')).status).toBe(400);
  });

  it('reads through the typed client into the types it wrote', async () => {
    const client = createClient({ baseUrl: t.url, apiKey: ws.apiKey, retry: { maxAttempts: 1 } });
    const written: components['schemas']['SequenceStepInput'] = {
      delay: { value: 0, unit: 'days' },
      variants: [{ subject: 'Hello {{firstName}}', body: 'Typed both ways.' }],
    };
    const created = await client.POST('/v2/campaign/create', { body: { name: 'Typed', schedule } });
    const campaignId = created.data!.data.campaign.id;
    await client.POST('/v2/campaign/sequence-create', { body: { campaignId, steps: [written] } });
    const { data } = await client.GET('/v2/campaign/get', { params: { query: { campaignId } } });
    const step: components['schemas']['SequenceStep'] = data!.data.campaign.sequence[0];
    const schedule_: components['schemas']['CampaignSchedule'] | null = data!.data.campaign.schedule;
    expect(step.delay).toEqual(written.delay);
    expect(step.variants.map(({ subject, body }) => ({ subject, body }))).toEqual(written.variants);
    expect(schedule_).toMatchObject(schedule);
  });
});

describe('POST /v2/campaign/duplicate', () => {
  it('copies sequence, subsequences (triggers on the copy’s steps), schedule, options and accounts into a draft', async () => {
    const { campaign } = await fullCampaign();
    const original = (await ws.client.GET('/v2/campaign/get', { params: { query: { campaignId: campaign.id } } })).data!
      .data.campaign;
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId: campaign.id, contacts: [{ email: 'lead@globex.test' }] },
    });
    const { data, response } = await ws.client.POST('/v2/campaign/duplicate', { body: { campaignId: campaign.id } });
    expect(response.status).toBe(201);
    const copy = data!.data.campaign;
    expect(copy.id).not.toBe(campaign.id);
    expect(copy).toMatchObject({ name: 'Q4 founders (copy)', status: 'draft', launchedAt: null });
    expect(shape(copy)).toEqual(shape(original));
    expect(copy.counts.contacts).toBe(0);
    expect(copy.sequence.every((s) => s.campaignId === copy.id)).toBe(true);
    expect(copy.subsequences[0].trigger).toEqual({ type: 'opened', stepId: copy.sequence[0].id });
    const sub = await ws.client.GET('/v2/subsequence/get', {
      params: { query: { subsequenceId: copy.subsequences[1].id } },
    });
    expect(sub.data!.data.subsequence.steps[0]).toMatchObject({ delay: { value: 30, unit: 'days' } });
    // The original is untouched.
    const again = await ws.client.GET('/v2/campaign/get', { params: { query: { campaignId: campaign.id } } });
    expect(again.data!.data.campaign.sequence).toEqual(original.sequence);
  });

  it('takes a name and an Idempotency-Key; 404 for another workspace, 400 for a blank name', async () => {
    const campaign = await createCampaign(ws);
    const headers = { 'Idempotency-Key': `dup-${campaign.id}` };
    const body = { campaignId: campaign.id, name: 'Q1 founders' };
    const first = await ws.client.POST('/v2/campaign/duplicate', { body, headers });
    const second = await ws.client.POST('/v2/campaign/duplicate', { body, headers });
    expect(first.data!.data.campaign.name).toBe('Q1 founders');
    expect(second.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(second.data!.data.campaign.id).toBe(first.data!.data.campaign.id);
    const theirs = await createCampaign(other);
    expect((await raw(t, ws, 'POST', '/v2/campaign/duplicate', { campaignId: theirs.id })).status).toBe(404);
    expect((await raw(t, ws, 'POST', '/v2/campaign/duplicate', { campaignId: campaign.id, name: '  ' })).status).toBe(
      400,
    );
  });
});

describe('GET /v2/account/get', () => {
  it('reads one account by id or by address, never a secret; 400 unless exactly one is given; 404 across workspaces', async () => {
    const accountId = await insertAccount(t, ws.workspaceId, {
      email: 'reader@acme-mail.io',
      smtp_host: 'smtp.acme-mail.io',
      smtp_password_enc: 'stored-secret',
    });
    const address = encodeURIComponent('reader@acme-mail.io');
    const byId = await ws.client.GET('/v2/account/get', { params: { query: { accountId } } });
    expect(byId.response.status).toBe(200);
    expect(byId.data!.data.account).toMatchObject({ id: accountId, email: 'reader@acme-mail.io', status: 'active' });
    const byEmail = await ws.client.GET('/v2/account/get', { params: { query: { email: 'READER@acme-mail.io' } } });
    expect(byEmail.data!.data.account).toEqual(byId.data!.data.account);
    const listed = await ws.client.GET('/v1/account/list', { params: { query: { limit: 100 } } });
    expect(listed.data!.data.items.find((a) => a.id === accountId)).toEqual(byId.data!.data.account);
    expect(JSON.stringify(byId.data)).not.toContain('stored-secret');
    expect((await raw(t, ws, 'GET', '/v2/account/get')).status).toBe(400);
    expect((await raw(t, ws, 'GET', `/v2/account/get?accountId=${accountId}&email=${address}`)).status).toBe(400);
    expect((await raw(t, other, 'GET', `/v2/account/get?accountId=${accountId}`)).status).toBe(404);
    expect((await raw(t, other, 'GET', `/v2/account/get?email=${address}`)).status).toBe(404);
  });
});
