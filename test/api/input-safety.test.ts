/**
 * Input the database cannot store or the server cannot decode answers a clear 4xx naming the field,
 * never a 500: NUL characters and unpaired surrogates (bodies, queries, paths), undecodable paths,
 * and bodies whose Content-Encoding does not match them.
 */
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

describe('unstorable and undecodable input', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let campaignId: string;
  beforeAll(async () => {
    t = await startTestServer();
    ws = await t.createWorkspace();
    const created = await ws.client.POST('/v2/campaign/create', { body: { name: 'Safety' } });
    campaignId = created.data!.data.campaign.id;
  });
  afterAll(() => t.close());

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    t.fetch(path, { method: 'POST', apiKey: ws.apiKey, headers: { 'content-type': 'application/json', ...headers }, body });

  it('answers 400 with the field for a NUL or a lone surrogate in a body, and stores nothing', async () => {
    const nul = await post('/v2/contact/add', `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","firstName":"Jo\\u0000e"}]}`);
    expect(nul.status).toBe(400);
    expect((await nul.json()).details).toEqual([expect.objectContaining({ field: 'body.contacts.0.firstName', code: 'invalid_text', location: 'body' })]);
    const surrogate = await post('/v2/contact/add', `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","customVariables":{"note":"\\ud800"}}]}`);
    expect(surrogate.status).toBe(400);
    expect((await surrogate.json()).details[0].field).toBe('body.contacts.0.customVariables.note');
    const key = await post('/v2/contact/add', `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","customVariables":{"k\\u0000":"v"}}]}`);
    expect(key.status).toBe(400);
    // A correctly paired surrogate (an emoji) is fine.
    const emoji = await post('/v2/contact/add', `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","firstName":"Jo \\ud83d\\ude00"}]}`);
    expect(emoji.status).toBe(200);
    expect(Number((await t.db('contacts').where({ campaign_id: campaignId }).count<{ n: string }[]>('* as n'))[0].n)).toBe(1);
  });

  it('answers 400 for a NUL in a query or a path, and a clean message for an undecodable path', async () => {
    const query = await t.fetch(`/v2/contact/get?campaignId=${campaignId}&email=a%00b%40c.test`, { apiKey: ws.apiKey });
    expect(query.status).toBe(400);
    expect((await query.json()).details[0]).toMatchObject({ field: 'query.email', location: 'query' });
    const path = await t.fetch('/v2/whitelabel/user/a%00b%40c.test', { apiKey: ws.apiKey });
    expect(path.status).toBe(400);
    const malformed = await t.fetch('/v2/whitelabel/user/%E0%A4%A', { apiKey: ws.apiKey });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toBe('Malformed URI: the path is not valid percent-encoded UTF-8.');
  });

  it('answers a body whose Content-Encoding does not match it with 400 or 415, never 500', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await post('/v2/campaign/create', '{"name":"x"}', { 'content-encoding': encoding });
      expect([400, 415]).toContain(res.status);
      const body = await res.json();
      expect(body.code).toMatch(/^(malformed_json|unsupported_media_type|validation_error)$/);
    }
    const unknown = await post('/v2/campaign/create', '{"name":"x"}', { 'content-encoding': 'zstd' });
    expect(unknown.status).toBe(415);
  });

  it('answers HEAD on a GET operation as the GET, without a body', async () => {
    const res = await t.fetch('/v1/campaign/list?limit=1', { method: 'HEAD', apiKey: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await res.text()).toBe('');
  });
});
