/**
 * Input the validator's own checks let through, answered 400 naming what is wrong instead of a 500 or a
 * silently lifted bound: non-finite `limit`/`skip` on every list operation (v1 and v2), a NUL byte in an
 * uploaded CSV cell, webhook URLs the URL parser refuses, a subscription to every event type, and blank or
 * control-character names of a whitelabel sub-user.
 */
import { expect } from '@jest/globals';
import { newId } from '../../server/platform/ids';
import { readBundledSpec } from '../../server/platform/project-root';
import { readJson, type ErrorBody, type V1ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { addCampaign, post } from './contact.helpers';

let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer({ config: { secretKey: '88'.repeat(32), allowPrivateWebhooks: true } });
  ws = await t.createWorkspace({ whitelabel: true });
});
afterAll(async () => {
  await t.close();
});

interface Parameter {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
}

/** Every GET operation of the bundle that takes `limit` or `skip`, with its other required query parameters. */
function listOperations(): { path: string; paging: string[]; required: string[] }[] {
  const spec = readBundledSpec() as unknown as {
    paths: Record<string, { get?: { parameters?: Parameter[] } }>;
    components: { parameters: Record<string, Parameter> };
  };
  const resolve = (p: Parameter) => (p.$ref ? spec.components.parameters[p.$ref.split('/').pop()!] : p);
  return Object.entries(spec.paths).flatMap(([path, item]) => {
    const query = (item.get?.parameters ?? []).map(resolve).filter((p) => p.in === 'query');
    const paging = query.map((p) => p.name).filter((n) => n === 'limit' || n === 'skip');
    if (!paging.length) return [];
    return [{ path, paging, required: query.filter((p) => p.required).map((p) => p.name) }];
  });
}

describe('limit and skip', () => {
  const operations = listOperations();

  it('are taken by the list operations of both versions', () => {
    const paths = operations.map((o) => o.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/v1/campaign/list',
        '/v2/campaign/list',
        '/v2/suppression/list',
        '/v2/event/list',
        '/v2/email/list',
      ]),
    );
    expect(paths.length).toBeGreaterThanOrEqual(18);
  });

  it('must be finite integers in range: a 400 naming the parameter on every list operation', async () => {
    const refused: string[] = [];
    // One operation at a time, its requests together.
    for (const { path, paging, required } of operations) {
      // Required query parameters are all ids: any well-formed one passes validation.
      const base = required.map((name) => `${name}=${newId()}&`).join('');
      const cases = paging.flatMap((name) =>
        ['Infinity', '-Infinity', '1e400', '1.5'].map((value) => ({ name, value })),
      );
      await Promise.all(
        cases.map(async ({ name, value }) => {
          const res = await t.fetch(`${path}?${base}${name}=${value}`, { apiKey: ws.apiKey });
          const what = `${path}?${name}=${value}`;
          if (res.status !== 400) {
            refused.push(`${what}: ${res.status}`);
            await res.body?.cancel();
          } else if (path.startsWith('/v2/')) {
            const body = await readJson<ErrorBody>(res);
            if (!body.details.some((d) => d.field === `query.${name}`))
              refused.push(`${what}: details ${JSON.stringify(body.details)}`);
          } else {
            const body = await readJson<V1ErrorBody>(res);
            if (!body.error.includes(`query/${name}`)) refused.push(`${what}: ${body.error}`);
          }
        }),
      );
    }
    expect(refused).toEqual([]);
  }, 120_000);

  it('still take finite values in range', async () => {
    const res = await t.fetch('/v2/suppression/list?limit=100&skip=1000000', { apiKey: ws.apiKey });
    expect(res.status).toBe(200);
    const body = await readJson<{ data: { pagination: { limit: number; skip: number; hasMore: boolean } } }>(res);
    expect(body.data.pagination).toMatchObject({ limit: 100, skip: 1000000, hasMore: false });
    expect((await t.fetch('/v2/event/list?limit=100', { apiKey: ws.apiKey })).status).toBe(200);
    expect((await t.fetch('/v2/email/list?limit=1', { apiKey: ws.apiKey })).status).toBe(200);
  });
});

describe('a NUL byte in an uploaded CSV cell', () => {
  const upload = (path: string, text: string) =>
    t.fetch(path, { method: 'POST', apiKey: ws.apiKey, headers: { 'Content-Type': 'text/csv' }, body: text });

  it('is a 400 naming the line, and nothing is queued (contact import and verify)', async () => {
    const campaignId = await addCampaign(t, ws);
    const jobs = async () =>
      Number((await t.db('jobs').where({ workspace_id: ws.workspaceId }).count({ n: '*' }))[0].n);
    const before = await jobs();
    for (const path of [`/v2/job/contact-import?campaignId=${campaignId}`, '/v2/job/verify']) {
      const res = await upload(path, 'email,firstName\nann@acme.com,Ann\nbob@acme.com,B\u0000ob\n');
      expect(res.status).toBe(400);
      const body = await readJson<ErrorBody>(res);
      expect(body.error).toBe('Line 3: cell 2 holds a NUL character, which text may not contain');
      expect(body.details).toEqual([
        expect.objectContaining({ field: 'body.csv', message: expect.stringContaining('line 3') as unknown }),
      ]);
      // In the header too.
      const header = await upload(path, 'email,first\u0000Name\nann@acme.com,Ann\n');
      expect(header.status).toBe(400);
      expect((await readJson<ErrorBody>(header)).error).toMatch(/^Line 1: cell 2 holds a NUL character/);
    }
    expect(await jobs()).toBe(before);
  });
});

describe('webhook URLs', () => {
  const unparsable = [
    'https://a%2fb.example.com/x',
    'https://[fe80::1%25lo]/',
    'https://exa%00mple.com/x',
    'https://ex%20ample.com/x',
  ];

  it('that the URL parser refuses are a 400 naming the field, on create and on update', async () => {
    const created = await post(t, ws, '/v2/webhook/create', {
      url: 'http://127.0.0.1:9/hooks',
      eventTypes: ['email.sent'],
    });
    expect(created.status).toBe(201);
    const { id } = (await readJson<{ data: { subscription: { id: string } } }>(created)).data.subscription;
    for (const url of unparsable) {
      for (const [path, body] of [
        ['/v2/webhook/create', { url, eventTypes: ['email.sent'] }],
        ['/v2/webhook/update', { id, url }],
      ] as const) {
        const res = await post(t, ws, path, body);
        expect([url, path, res.status]).toEqual([url, path, 400]);
        const error = await readJson<ErrorBody>(res);
        expect(error.details).toEqual([expect.objectContaining({ field: 'body.url', location: 'body' })]);
      }
    }
  });
});

describe('webhook event types', () => {
  it('a subscription may take every event type of the spec, each at most once', async () => {
    const spec = readBundledSpec() as unknown as { components: { schemas: { EventType: { enum: string[] } } } };
    const all = spec.components.schemas.EventType.enum;
    const created = await post(t, ws, '/v2/webhook/create', { url: 'http://127.0.0.1:9/all', eventTypes: all });
    expect(created.status).toBe(201);
    const { subscription } = (await readJson<{ data: { subscription: { id: string; eventTypes: string[] } } }>(created))
      .data;
    expect(subscription.eventTypes).toEqual(all);
    const updated = await post(t, ws, '/v2/webhook/update', { id: subscription.id, eventTypes: [...all].reverse() });
    expect(updated.status).toBe(200);
    // One type twice is still refused.
    const twice = await post(t, ws, '/v2/webhook/create', {
      url: 'http://127.0.0.1:9/twice',
      eventTypes: [...all, all[0]],
    });
    expect(twice.status).toBe(400);
  });
});

describe('whitelabel sub-user names', () => {
  it('blank or holding control characters or line breaks are a 400 naming the field', async () => {
    for (const name of ['', '   ', '\t', 'Maria\nLopez', 'Maria\u0007', 'Maria\u2028Lopez', '\u007f']) {
      const res = await post(t, ws, '/v2/whitelabel/register', { email: `sub${newId().slice(-12)}@acme.com`, name });
      expect([JSON.stringify(name), res.status]).toEqual([JSON.stringify(name), 400]);
      const body = await readJson<ErrorBody>(res);
      expect(body.details).toEqual([expect.objectContaining({ field: 'body.name' })]);
    }
    const ok = await post(t, ws, '/v2/whitelabel/register', {
      email: `sub${newId().slice(-12)}@acme.com`,
      name: 'María López-Núñez',
    });
    expect(ok.status).toBe(201);
  });
});
