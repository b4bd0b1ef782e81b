/**
 * GET /v2/contact/list: each filter, the search, the sorts, cursor pages that stay put while contacts are added,
 * another workspace's contacts never shown, and a cursor this API did not give refused.
 */
import { expect } from '@jest/globals';
import { newId } from '../../server/platform/ids';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { addCampaign } from './contact.helpers';

let t: TestServer;
let ws: TestWorkspace;
let other: TestWorkspace;
let campaignA: string;
let campaignB: string;
/** Contact ids by address. */
const ids = new Map<string, string>();

const list = async (query: Record<string, string | number | boolean>, owner = ws) => {
  const { data, error, response } = await owner.client.GET('/v2/contact/list', { params: { query } });
  if (!data) throw new Error(`${response.status}: ${JSON.stringify(error)}`);
  return data.data;
};
const emails = async (query: Record<string, string | number | boolean>) =>
  (await list(query)).items.map((i) => i.contact.email);

async function add(campaignId: string, contacts: { email: string; firstName?: string; companyName?: string }[]) {
  const { data } = await ws.client.POST('/v1/contact/add', { body: { campaignId, contacts } });
  for (const c of data!.data.added) ids.set(c.email, c.id);
}

/** A reply of `intent` from the contact, as the inbox stores it. */
async function replied(email: string, campaignId: string, intent: string) {
  const id = newId();
  const now = t.clock.now();
  await t.db('email_messages').insert({
    id,
    workspace_id: ws.workspaceId,
    campaign_id: campaignId,
    contact_id: ids.get(email),
    direction: 'inbound',
    kind: 'campaign',
    message_id: `<${id}@example.com>`,
    references: [],
    thread_id: id,
    from_address: email,
    to_address: 'sdr@acme-mail.io',
    subject: 'Re: hello',
    text_body: 'yes',
    status: 'received',
    created_at: now,
  });
  await t.db('reply_intents').insert({
    message_id: id,
    workspace_id: ws.workspaceId,
    campaign_id: campaignId,
    contact_id: ids.get(email),
    intent,
    source: 'rules',
    replied_at: now,
    decided_at: now,
  });
}

beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
  other = await t.createWorkspace();
  campaignA = await addCampaign(t, ws);
  campaignB = await addCampaign(t, ws);
  t.clock.set('2026-11-20T09:00:00.000Z');
  await add(campaignA, [
    { email: 'ann@acme.com', firstName: 'Ann', companyName: 'Acme' },
    { email: 'bob@globex.com', firstName: 'Bob', companyName: 'Globex' },
  ]);
  t.clock.set('2026-11-21T09:00:00.000Z');
  await add(campaignA, [{ email: 'cy@initech.com', firstName: 'Cyrus', companyName: 'Initech' }]);
  t.clock.set('2026-11-22T09:00:00.000Z');
  await add(campaignB, [{ email: 'dee@acme.com', firstName: 'Dee', companyName: 'Umbrella 100%' }]);
  const { data: otherCampaign } = { data: await addCampaign(t, other) };
  await other.client.POST('/v1/contact/add', {
    body: { campaignId: otherCampaign, contacts: [{ email: 'ann@acme.com', firstName: 'Ann' }] },
  });
  t.clock.set('2026-11-23T09:00:00.000Z');
  await ws.client.POST('/v1/contact/update/status', {
    body: { contactId: ids.get('bob@globex.com')!, leadStatus: 'interested' },
  });
  await ws.client.POST('/v2/contact/pause', { body: { contactIds: [ids.get('cy@initech.com')!] } });
  await t.db('sending_progress').insert([
    {
      contact_id: ids.get('ann@acme.com'),
      workspace_id: ws.workspaceId,
      campaign_id: campaignA,
      step_number: 2,
      state: 'waiting',
      due_at: new Date('2026-11-25T10:00:00.000Z'),
      updated_at: t.clock.now(),
    },
    {
      contact_id: ids.get('bob@globex.com'),
      workspace_id: ws.workspaceId,
      campaign_id: campaignA,
      step_number: 3,
      state: 'done',
      due_at: t.clock.now(),
      updated_at: t.clock.now(),
    },
  ]);
  await replied('bob@globex.com', campaignA, 'meetingRequest');
});
afterAll(() => t.close());

describe('GET /v2/contact/list', () => {
  it('lists the workspace newest first, each contact with where it stands', async () => {
    const page = await list({});
    expect(page.items.map((i) => i.contact.email)).toEqual([
      'dee@acme.com',
      'cy@initech.com',
      'bob@globex.com',
      'ann@acme.com',
    ]);
    expect(page.pagination).toEqual({ limit: 20, hasMore: false, nextCursor: null });
    const byEmail = new Map(page.items.map((i) => [i.contact.email, i.progress]));
    expect(byEmail.get('ann@acme.com')).toEqual({
      state: 'waiting',
      step: 2,
      nextSendAt: '2026-11-25T10:00:00.000Z',
      paused: false,
      subsequenceId: null,
      lastReplyIntent: null,
    });
    expect(byEmail.get('bob@globex.com')).toMatchObject({
      state: 'done',
      step: null,
      lastReplyIntent: 'meetingRequest',
    });
    expect(byEmail.get('cy@initech.com')).toMatchObject({ state: null, step: null, paused: true });
  });

  it('filters by campaign, status, lead status, intent, step, paused and creation time', async () => {
    expect(await emails({ campaignId: campaignB })).toEqual(['dee@acme.com']);
    expect(await emails({ status: 'paused' })).toEqual(['cy@initech.com']);
    expect(await emails({ leadStatus: 'interested' })).toEqual(['bob@globex.com']);
    expect(await emails({ intent: 'meetingRequest' })).toEqual(['bob@globex.com']);
    expect(await emails({ step: 2 })).toEqual(['ann@acme.com']);
    expect(await emails({ step: 3 })).toEqual([]);
    expect(await emails({ paused: true })).toEqual(['cy@initech.com']);
    expect(await emails({ paused: false, campaignId: campaignA })).toEqual(['bob@globex.com', 'ann@acme.com']);
    expect(
      await emails({ createdAfter: '2026-11-21T09:00:00.000Z', createdBefore: '2026-11-22T09:00:00.000Z' }),
    ).toEqual(['cy@initech.com']);
    expect(await emails({ subsequenceId: newId() })).toEqual([]);
  });

  it('searches address, name and company case-insensitively, anywhere in the text, % as itself', async () => {
    expect(await emails({ search: 'ACME' })).toEqual(['dee@acme.com', 'ann@acme.com']);
    expect(await emails({ search: 'yru' })).toEqual(['cy@initech.com']);
    expect(await emails({ search: 'globe' })).toEqual(['bob@globex.com']);
    expect(await emails({ search: '00%' })).toEqual(['dee@acme.com']);
    expect(await emails({ search: 'a%e' })).toEqual([]);
  });

  it('pages a search by cursor: a page filled from the contacts next in order, the last one from the index', async () => {
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await list({ search: '.com', ...(cursor ? { cursor } : {}), limit: 1, sort: 'email', order: 'asc' });
      pages.push(page.items.map((i) => i.contact.email));
      cursor = page.pagination.nextCursor ?? undefined;
    } while (cursor);
    // Every address holds ".com": one at a time, in order, none twice, the last page saying so.
    expect(pages).toEqual([['ann@acme.com'], ['bob@globex.com'], ['cy@initech.com'], ['dee@acme.com']]);
  });

  it('sorts by address and by last change, either way', async () => {
    expect(await emails({ sort: 'email', order: 'asc' })).toEqual([
      'ann@acme.com',
      'bob@globex.com',
      'cy@initech.com',
      'dee@acme.com',
    ]);
    expect((await emails({ sort: 'updatedAt' })).slice(0, 2).sort()).toEqual(['bob@globex.com', 'cy@initech.com']);
    expect((await emails({ sort: 'updatedAt', order: 'asc' }))[0]).toBe('ann@acme.com');
  });

  it('pages by cursor, and contacts added meanwhile shift no page', async () => {
    for (const sort of ['createdAt', 'email'] as const) {
      const before = (await list({ limit: 100, sort, order: 'asc' })).items.map((i) => i.contact.email);
      const first = await list({ limit: 2, sort, order: 'asc' });
      expect(first.pagination.hasMore).toBe(true);
      // One address sorts before the cursor, one after: neither shifts the next page.
      t.clock.set('2026-11-24T09:00:00.000Z');
      await add(campaignB, [{ email: `aaa-${sort}@zeta.com` }, { email: `zzz-${sort}@zeta.com` }]);
      const second = await list({ limit: 2, sort, order: 'asc', cursor: first.pagination.nextCursor! });
      expect([...first.items, ...second.items].map((i) => i.contact.email)).toEqual(before.slice(0, 4));
    }
  });

  it("never shows another workspace's contacts; another workspace's campaign is a 404", async () => {
    const theirs = await list({ search: 'ann@' }, other);
    expect(theirs.items).toHaveLength(1);
    expect(theirs.items[0].contact.id).not.toBe(ids.get('ann@acme.com'));
    const res = await other.client.GET('/v2/contact/list', { params: { query: { campaignId: campaignA } } });
    expect(res.response.status).toBe(404);
  });

  it('refuses a cursor it did not give, and a search under 3 characters, with a 400', async () => {
    for (const cursor of ['bm90LWEtY3Vyc29y', Buffer.from(`x|${newId()}`).toString('base64url')]) {
      const res = await ws.client.GET('/v2/contact/list', { params: { query: { cursor } } });
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ code: 'validation_error', details: [{ field: 'query.cursor' }] });
    }
    const short = await ws.client.GET('/v2/contact/list', { params: { query: { search: 'ab' } } });
    expect(short.response.status).toBe(400);
  });
});
