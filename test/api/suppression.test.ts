import { startTestServer, type TestServer } from '../helpers/server';

describe('suppression list', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('adds addresses and domains by batch, reports duplicates and invalid values by position, lists and removes', async () => {
    const ws = await t.createWorkspace();
    const added = await ws.client.POST('/v2/suppression/add', {
      body: { values: ['Jane@Acme.com', 'competitor.io', 'not an address', 'jane@acme.com'] },
    });
    expect(added.data!.data).toEqual({
      added: ['jane@acme.com', 'competitor.io'],
      alreadyListed: [],
      invalid: [{ index: 2, value: 'not an address', message: 'Not an email address or a domain.' }],
    });
    const again = await ws.client.POST('/v2/suppression/add', { body: { values: ['competitor.io'] } });
    expect(again.data!.data).toEqual({ added: [], alreadyListed: ['competitor.io'], invalid: [] });

    const page = await ws.client.GET('/v2/suppression/list', { params: { query: { limit: 1 } } });
    expect(page.data!.data.pagination).toEqual({ limit: 1, skip: 0, total: 2, hasMore: true });
    const search = await ws.client.GET('/v2/suppression/list', { params: { query: { search: 'ACME' } } });
    expect(search.data!.data.items.map((i) => [i.value, i.kind, i.reason])).toEqual([
      ['jane@acme.com', 'address', 'manual'],
    ]);
    const domain = await ws.client.GET('/v2/suppression/list', { params: { query: { search: 'competitor' } } });
    expect(domain.data!.data.items[0].kind).toBe('domain');

    // The engine's check: an address, or any address at a listed domain.
    const suppressed = await t.services.suppression.filterSuppressed(t.db, ws.workspaceId, [
      'jane@acme.com',
      'bob@Competitor.io',
      'ok@acme.com',
    ]);
    expect([...suppressed].sort()).toEqual(['bob@competitor.io', 'jane@acme.com']);

    const removed = await ws.client.POST('/v2/suppression/remove', {
      body: { values: ['JANE@acme.com', 'never@listed.io'] },
    });
    expect(removed.data!.data).toEqual({ removed: ['jane@acme.com'], notListed: ['never@listed.io'] });
  });

  it('keeps each workspace’s list to itself', async () => {
    const a = await t.createWorkspace();
    const b = await t.createWorkspace();
    await a.client.POST('/v2/suppression/add', { body: { values: ['secret@acme.com'] } });
    const listed = await b.client.GET('/v2/suppression/list', {});
    expect(listed.data!.data.items).toEqual([]);
    const removed = await b.client.POST('/v2/suppression/remove', { body: { values: ['secret@acme.com'] } });
    expect(removed.data!.data).toEqual({ removed: [], notListed: ['secret@acme.com'] });
    expect((await t.services.suppression.filterSuppressed(t.db, a.workspaceId, ['secret@acme.com'])).size).toBe(1);
  });
});
