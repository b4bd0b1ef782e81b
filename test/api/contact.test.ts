/**
 * POST /v1/contact/add: batches with per-row outcomes (added, duplicates, invalid), validation in
 * both error formats, another workspace's campaign, the plan's contact cap, atomicity and
 * concurrent adds of the same addresses.
 */
import { expect } from '@jest/globals';
import type { RawResult } from '../../server/db';
import { readJson, type ErrorBody } from '../helpers/bodies';
import { newId } from '../../server/platform/ids';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { addCampaign, contactRows, expectV2Error, post } from './contact.helpers';

let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
});
afterAll(() => t.close());

const NOW = '2026-11-23T10:00:00.000Z';
beforeEach(() => t.clock.set(NOW));

describe('POST /v1/contact/add', () => {
  it('adds one contact with trimmed text, a lower-case address and exact values', async () => {
    const campaignId = await addCampaign(t, ws);
    const { data, response } = await ws.client.POST('/v1/contact/add', {
      body: {
        campaignId,
        contacts: [
          {
            email: '  Jane.Doe@ACME.com ',
            firstName: ' Jane ',
            lastName: 'Doe',
            companyName: 'Acme Inc.',
            jobTitle: '',
            phone: null,
            website: 'acme.com',
            linkedinUrl: 'https://www.linkedin.com/in/janedoe',
            customVariables: { plan: 'Growth', seats: 12, trialUser: true, referrer: null },
          },
        ],
      },
    });
    expect(response.status).toBe(200);
    const contact = data!.data.added[0];
    expect(data).toEqual({
      status: 'success',
      success: true,
      message: '1 contact added, 0 duplicates, 0 invalid',
      data: {
        campaignId,
        added: [
          {
            id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/),
            campaignId,
            email: 'jane.doe@acme.com',
            firstName: 'Jane',
            lastName: 'Doe',
            companyName: 'Acme Inc.',
            jobTitle: null,
            phone: null,
            website: 'acme.com',
            linkedinUrl: 'https://www.linkedin.com/in/janedoe',
            timezone: null,
            customVariables: { plan: 'Growth', seats: 12, trialUser: true, referrer: null },
            status: 'active',
            leadStatus: null,
            createdAt: NOW,
            updatedAt: NOW,
          },
        ],
        duplicates: [],
        invalid: [],
        counts: { received: 1, added: 1, duplicates: 0, invalid: 0 },
      },
    });
    const { data: got } = await ws.client.GET('/v1/contact/get', { params: { query: { contactId: contact.id } } });
    expect(got!.data.contact).toEqual(contact);
  });

  it('reports addresses already in the campaign, repeated in the batch and invalid, by index, and adds the rest', async () => {
    const campaignId = await addCampaign(t, ws);
    const first = await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: [{ email: 'jane@acme.com', firstName: 'Jane' }] },
    });
    const janeId = first.data!.data.added[0].id;

    t.clock.set('2026-11-23T11:00:00.000Z');
    const { data } = await ws.client.POST('/v1/contact/add', {
      body: {
        campaignId,
        contacts: [
          { email: 'max@globex.io', firstName: 'Max' },
          { email: 'JANE@acme.com', firstName: 'Not Jane' },
          { email: 'not-an-email' },
          { email: 'ann@initech.com' },
          { email: ' Max@Globex.io ', firstName: 'Max again' },
          { email: 'a@b' },
          { email: 'jane@acme.com' },
          { email: '' },
        ],
      },
    });
    const [max, ann] = data!.data.added;
    expect(data!.message).toBe('2 contacts added, 3 duplicates, 3 invalid');
    expect(data!.data.added.map((c) => [c.email, c.firstName, c.createdAt])).toEqual([
      ['max@globex.io', 'Max', '2026-11-23T11:00:00.000Z'],
      ['ann@initech.com', null, '2026-11-23T11:00:00.000Z'],
    ]);
    expect(data!.data.duplicates).toEqual([
      { index: 1, email: 'jane@acme.com', reason: 'alreadyInCampaign', contactId: janeId },
      { index: 4, email: 'max@globex.io', reason: 'repeatedInRequest', contactId: max.id },
      { index: 6, email: 'jane@acme.com', reason: 'repeatedInRequest', contactId: janeId },
    ]);
    expect(data!.data.invalid).toEqual([
      { index: 2, email: 'not-an-email', reason: 'invalidEmail', message: 'is not a valid email address' },
      { index: 5, email: 'a@b', reason: 'invalidEmail', message: 'is not a valid email address' },
      { index: 7, email: '', reason: 'invalidEmail', message: 'is not a valid email address' },
    ]);
    expect(data!.data.counts).toEqual({ received: 8, added: 2, duplicates: 3, invalid: 3 });

    // The existing contact is untouched; the campaign holds each address once.
    const rows = await contactRows(t, campaignId);
    expect(rows.map((r) => [r.email, r.first_name])).toEqual([
      ['jane@acme.com', 'Jane'],
      ['max@globex.io', 'Max'],
      ['ann@initech.com', null],
    ]);
    expect(ann.id).toBe(rows[2].id);
  });

  it('allows the same address in two campaigns', async () => {
    const a = await addCampaign(t, ws);
    const b = await addCampaign(t, ws);
    for (const campaignId of [a, b]) {
      const { data } = await ws.client.POST('/v1/contact/add', {
        body: { campaignId, contacts: [{ email: 'same@acme.com' }] },
      });
      expect(data!.data.counts.added).toBe(1);
    }
  });

  it('adds a batch of 1000 and rejects 1001', async () => {
    const campaignId = await addCampaign(t, ws);
    const contacts = Array.from({ length: 1000 }, (_, i) => ({
      email: `lead${i}@bulk.example.org`,
      customVariables: { row: i },
    }));
    const { data } = await ws.client.POST('/v1/contact/add', { body: { campaignId, contacts } });
    expect(data!.data.counts).toEqual({ received: 1000, added: 1000, duplicates: 0, invalid: 0 });
    expect(data!.data.added[999]).toMatchObject({ email: 'lead999@bulk.example.org', customVariables: { row: 999 } });

    const over = await post(t, ws, '/v1/contact/add', {
      campaignId: await addCampaign(t, ws),
      contacts: [...contacts, { email: 'one@more.org' }],
    });
    expect(over.status).toBe(400);
    expect(await over.json()).toEqual({ error: 'request/body/contacts must NOT have more than 1000 items' });
  });

  it("answers 404 for another workspace's campaign and for an unknown one, in both formats", async () => {
    const other = await t.createWorkspace();
    const theirs = await addCampaign(t, other);
    for (const campaignId of [theirs, newId()]) {
      const v1 = await post(t, ws, '/v1/contact/add', { campaignId, contacts: [{ email: 'x@acme.com' }] });
      expect(v1.status).toBe(404);
      expect(await v1.json()).toEqual({ error: 'Campaign not found.' });
      const v2 = await post(t, ws, '/v2/contact/add', { campaignId, contacts: [{ email: 'x@acme.com' }] });
      await expectV2Error(v2, 404, 'not_found', 'Campaign not found.', []);
    }
    expect(await contactRows(t, theirs)).toEqual([]);
  });

  it('is served under /v2 with the same behaviour', async () => {
    const campaignId = await addCampaign(t, ws);
    const { data, response } = await ws.client.POST('/v2/contact/add', {
      body: { campaignId, contacts: [{ email: 'v2@acme.com' }] },
    });
    expect(response.status).toBe(200);
    expect(data!.data.added.map((c) => c.email)).toEqual(['v2@acme.com']);
  });

  describe('validation (nothing is added)', () => {
    let campaignId: string;
    beforeAll(async () => {
      campaignId = await addCampaign(t, ws);
    });
    afterEach(async () => expect(await contactRows(t, campaignId)).toEqual([]));

    it('rejects a body without campaignId or contacts', async () => {
      const v1 = await post(t, ws, '/v1/contact/add', { contacts: [{ email: 'x@acme.com' }] });
      expect(v1.status).toBe(400);
      expect(await v1.json()).toEqual({ error: "request/body must have required property 'campaignId'" });
      const v2 = await post(t, ws, '/v2/contact/add', { campaignId });
      await expectV2Error(v2, 400, 'validation_error', "request/body must have required property 'contacts'", [
        {
          field: 'body.contacts',
          location: 'body',
          message: "must have required property 'contacts'",
          code: 'required',
        },
      ]);
    });

    it('rejects an empty batch, a malformed campaign id, and unknown fields', async () => {
      const empty = await post(t, ws, '/v2/contact/add', { campaignId, contacts: [] });
      await expectV2Error(empty, 400, 'validation_error', 'request/body/contacts must NOT have fewer than 1 items', [
        { field: 'body.contacts', location: 'body', message: 'must NOT have fewer than 1 items', code: 'minItems' },
      ]);
      const badId = await post(t, ws, '/v1/contact/add', {
        campaignId: 'campaign-1',
        contacts: [{ email: 'x@acme.com' }],
      });
      expect(await badId.json()).toEqual({ error: 'request/body/campaignId must match format "uuid"' });
      const unknown = await post(t, ws, '/v2/contact/add', {
        campaignId,
        contacts: [{ email: 'x@acme.com', nickname: 'X' }],
      });
      expect((await readJson<ErrorBody>(unknown)).details).toEqual([
        {
          field: 'body.contacts.0.nickname',
          location: 'body',
          message: 'must NOT have additional properties',
          code: 'additionalProperties',
        },
      ]);
    });

    it('rejects a field over its bound', async () => {
      const res = await post(t, ws, '/v2/contact/add', {
        campaignId,
        contacts: [{ email: 'x@acme.com', firstName: 'J'.repeat(101) }],
      });
      expect((await readJson<ErrorBody>(res)).details).toEqual([
        {
          field: 'body.contacts.0.firstName',
          location: 'body',
          message: 'must NOT have more than 100 characters',
          code: 'maxLength',
        },
      ]);
    });

    it('rejects custom variables with a bad key, an object or array value, or a reserved name', async () => {
      const badKey = await post(t, ws, '/v2/contact/add', {
        campaignId,
        contacts: [{ email: 'x@acme.com' }, { email: 'y@acme.com', customVariables: { '1st': 'x' } }],
      });
      expect(badKey.status).toBe(400);
      expect((await readJson<ErrorBody>(badKey)).details).toContainEqual(
        expect.objectContaining({
          field: expect.stringMatching(/^body\.contacts\.1\.customVariables/),
          code: 'pattern',
        }),
      );

      for (const value of [{ nested: true }, ['a', 'b']]) {
        const res = await post(t, ws, '/v2/contact/add', {
          campaignId,
          contacts: [{ email: 'x@acme.com', customVariables: { plan: value } }],
        });
        expect(res.status).toBe(400);
        expect((await readJson<ErrorBody>(res)).details).toContainEqual(
          expect.objectContaining({ field: 'body.contacts.0.customVariables.plan', code: 'type' }),
        );
      }

      const reserved = await post(t, ws, '/v2/contact/add', {
        campaignId,
        contacts: [{ email: 'x@acme.com' }, { email: 'y@acme.com', customVariables: { firstName: 'Y', ok: 1 } }],
      });
      await expectV2Error(
        reserved,
        400,
        'validation_error',
        'Custom variable names cannot be built-in contact fields: firstName.',
        [
          {
            field: 'body.contacts.1.customVariables.firstName',
            location: 'body',
            message: '"firstName" is a built-in contact field and cannot be a custom variable',
            code: 'reserved',
          },
        ],
      );
    });

    it('rejects more than 50 custom variables and a string value over 1000 characters', async () => {
      const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
      const res = await post(t, ws, '/v1/contact/add', {
        campaignId,
        contacts: [{ email: 'x@acme.com', customVariables: many }],
      });
      expect(await res.json()).toEqual({
        error: 'request/body/contacts/0/customVariables must NOT have more than 50 properties',
      });
      const long = await post(t, ws, '/v1/contact/add', {
        campaignId,
        contacts: [{ email: 'x@acme.com', customVariables: { note: 'n'.repeat(1001) } }],
      });
      expect(long.status).toBe(400);
    });
  });

  describe("the plan's contact cap", () => {
    it('refuses with 403 a request that would go over the cap, adds nothing, and does not count duplicates', async () => {
      const capped = await t.createWorkspace();
      const planId = newId();
      await t.db('plans').insert({
        id: planId,
        name: 'Capped',
        per_min: 1000,
        per_hour: 1000,
        per_day: 1000,
        credits: 0,
        max_contacts: 3,
        created_at: t.clock.now(),
      });
      await t.db('workspaces').where({ id: capped.workspaceId }).update({ plan_id: planId });
      const a = await addCampaign(t, capped);
      const b = await addCampaign(t, capped);

      const first = await capped.client.POST('/v1/contact/add', {
        body: { campaignId: a, contacts: [{ email: '1@acme.com' }, { email: '2@acme.com' }] },
      });
      expect(first.data!.data.counts.added).toBe(2);

      const over = await post(t, capped, '/v1/contact/add', {
        campaignId: b,
        contacts: [{ email: '3@acme.com' }, { email: '4@acme.com' }],
      });
      expect(over.status).toBe(403);
      expect(await over.json()).toEqual({
        error: 'Your plan allows 3 contacts; the workspace holds 2 and this request would add 2.',
      });
      expect(await contactRows(t, b)).toEqual([]);

      // Duplicates and invalid rows do not count toward the cap.
      const fits = await capped.client.POST('/v1/contact/add', {
        body: { campaignId: a, contacts: [{ email: '1@acme.com' }, { email: 'bad' }, { email: '3@acme.com' }] },
      });
      expect(fits.data!.data.counts).toEqual({ received: 3, added: 1, duplicates: 1, invalid: 1 });
    });
  });

  it('reports an address that a concurrent transaction inserted after the read as a duplicate, not an error', async () => {
    const campaignId = await addCampaign(t, ws);
    let commitFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (commitFirst = resolve));
    let firstInserted!: (id: string) => void;
    const firstId = new Promise<string>((resolve) => (firstInserted = resolve));
    const first = t.db.transaction(async (trx) => {
      const result = await t.services.contacts.addContacts(trx, ws.workspaceId, campaignId, [{ email: 'x@acme.com' }]);
      firstInserted(result.added[0].id);
      await firstMayCommit;
    });
    const xId = await firstId;
    const second = t.services.contacts.add(ws.workspaceId, campaignId, [
      { email: 'X@acme.com' },
      { email: 'y@acme.com' },
    ]);
    if (process.env.TEST_DATABASE_URL) {
      // PostgreSQL: wait until the second insert is blocked on the first transaction's row, so it
      // takes the ON CONFLICT path. (PGlite has one connection: the second simply runs after.)
      for (let i = 0; i < 100; i++) {
        const { rows } = await t.db.raw<RawResult<{ n: number }>>(
          "select count(*)::int as n from pg_locks where not granted and locktype = 'transactionid'",
        );
        if (rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    commitFirst();
    await first;
    const result = await second;
    expect(result.added.map((c) => c.email)).toEqual(['y@acme.com']);
    expect(result.duplicates).toEqual([{ index: 0, email: 'x@acme.com', reason: 'alreadyInCampaign', contactId: xId }]);
    expect((await contactRows(t, campaignId)).map((r) => r.email)).toEqual(['x@acme.com', 'y@acme.com']);
  });

  it('adds each address once when two requests race for the same addresses', async () => {
    const campaignId = await addCampaign(t, ws);
    const emails = Array.from({ length: 50 }, (_, i) => `race${i}@acme.com`);
    const batches = [emails.slice(0, 40), emails.slice(10)];
    const results = await Promise.all(
      batches.map((batch) =>
        ws.client.POST('/v1/contact/add', { body: { campaignId, contacts: batch.map((email) => ({ email })) } }),
      ),
    );
    for (const { response } of results) expect(response.status).toBe(200);
    const rows = await contactRows(t, campaignId);
    expect(rows.map((r) => r.email).sort()).toEqual([...emails].sort());
    const byEmail = new Map(rows.map((r) => [r.email, r.id]));
    // Every row of both requests is either added or reported with the contact that holds its address.
    for (const [i, { data }] of results.entries()) {
      expect(data!.data.counts.added + data!.data.counts.duplicates).toBe(batches[i].length);
      for (const d of data!.data.duplicates)
        expect(d).toMatchObject({ reason: 'alreadyInCampaign', contactId: byEmail.get(d.email) });
    }
    expect(results[0].data!.data.counts.added + results[1].data!.data.counts.added).toBe(50);
  });
});
