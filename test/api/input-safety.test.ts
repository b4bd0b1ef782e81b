/**
 * Input the database cannot store or the server cannot decode answers a clear 4xx naming the field,
 * never a 500: NUL characters and unpaired surrogates (bodies, queries, paths), undecodable paths,
 * and bodies whose Content-Encoding does not match them.
 */
import { readJson, type ErrorBody, type V1ErrorBody } from '../helpers/bodies';
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
    t.fetch(path, {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('answers 400 with the field for a NUL or a lone surrogate in a body, and stores nothing', async () => {
    const nul = await post(
      '/v2/contact/add',
      `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","firstName":"Jo\\u0000e"}]}`,
    );
    expect(nul.status).toBe(400);
    expect((await readJson<ErrorBody>(nul)).details).toEqual([
      expect.objectContaining({ field: 'body.contacts.0.firstName', code: 'invalid_text', location: 'body' }),
    ]);
    const surrogate = await post(
      '/v2/contact/add',
      `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","customVariables":{"note":"\\ud800"}}]}`,
    );
    expect(surrogate.status).toBe(400);
    expect((await readJson<ErrorBody>(surrogate)).details[0].field).toBe('body.contacts.0.customVariables.note');
    const key = await post(
      '/v2/contact/add',
      `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","customVariables":{"k\\u0000":"v"}}]}`,
    );
    expect(key.status).toBe(400);
    // A correctly paired surrogate (an emoji) is fine.
    const emoji = await post(
      '/v2/contact/add',
      `{"campaignId":"${campaignId}","contacts":[{"email":"a@b.test","firstName":"Jo \\ud83d\\ude00"}]}`,
    );
    expect(emoji.status).toBe(200);
    expect(
      Number((await t.db('contacts').where({ campaign_id: campaignId }).count<{ n: string }[]>('* as n'))[0].n),
    ).toBe(1);
  });

  it('answers 400 for a NUL in a query or a path, and a clean message for an undecodable path', async () => {
    const query = await t.fetch(`/v2/contact/get?campaignId=${campaignId}&email=a%00b%40c.test`, { apiKey: ws.apiKey });
    expect(query.status).toBe(400);
    expect((await readJson<ErrorBody>(query)).details[0]).toMatchObject({ field: 'query.email', location: 'query' });
    const path = await t.fetch('/v2/whitelabel/user/a%00b%40c.test', { apiKey: ws.apiKey });
    expect(path.status).toBe(400);
    const malformed = await t.fetch('/v2/whitelabel/user/%E0%A4%A', { apiKey: ws.apiKey });
    expect(malformed.status).toBe(400);
    expect((await readJson<V1ErrorBody>(malformed)).error).toBe(
      'Malformed URI: the path is not valid percent-encoded UTF-8.',
    );
  });

  it('answers a body whose Content-Encoding does not match it with 400 or 415, never 500', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await post('/v2/campaign/create', '{"name":"x"}', { 'content-encoding': encoding });
      expect([400, 415]).toContain(res.status);
      const body = await readJson<ErrorBody>(res);
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

  it('rejects numbers that JSON would silently change, and keeps exact ones', async () => {
    const add = (value: string) =>
      post(
        '/v2/contact/add',
        `{"campaignId":"${campaignId}","contacts":[{"email":"n${Math.random()}@b.test","customVariables":{"n":${value}}}]}`,
      );
    for (const value of ['9223372036854775808', '-9223372036854775808', '1e400', '1e-400', '-2.5e-330']) {
      const res = await add(value);
      expect(res.status).toBe(400);
      expect((await readJson<V1ErrorBody>(res)).error).toMatch(/cannot be represented exactly/);
    }
    for (const value of ['9007199254740991', '0', '0.0', '1.5e-10', '-0', '3.14'])
      expect((await add(value)).status).toBe(200);
    // Digits inside strings are text, not numbers.
    expect(
      (
        await post(
          '/v2/contact/add',
          `{"campaignId":"${campaignId}","contacts":[{"email":"s@b.test","customVariables":{"n":"1e-400 9223372036854775808"}}]}`,
        )
      ).status,
    ).toBe(200);
  });
});
