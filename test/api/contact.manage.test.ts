/**
 * One contact at a time: get, delete, lead status and custom variables (update merges, set
 * replaces, remove reports), each by id or by campaign and address, with their validation in both
 * formats and 404 for another workspace's contact or campaign.
 */
import { expect } from '@jest/globals';
import { readJson, type ErrorBody, type Success, type V1ErrorBody } from '../helpers/bodies';
import { newId } from '../../server/platform/ids';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { addCampaign, contactRows, expectV2Error, post } from './contact.helpers';

let t: TestServer;
let ws: TestWorkspace;
let other: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
  other = await t.createWorkspace();
});
afterAll(() => t.close());

const CREATED = '2026-11-23T10:00:00.000Z';
const LATER = '2026-11-24T08:30:00.000Z';

/** A campaign with Jane in it, created at CREATED; the clock is then at LATER. */
async function jane(
  owner: TestWorkspace = ws,
  customVariables: Record<string, string | number | boolean | null> = { plan: 'Growth', seats: 12 },
) {
  t.clock.set(CREATED);
  const campaignId = await addCampaign(t, owner);
  const { data } = await owner.client.POST('/v1/contact/add', {
    body: {
      campaignId,
      contacts: [{ email: 'Jane.Doe@acme.com', firstName: 'Jane', lastName: 'Doe', customVariables }],
    },
  });
  t.clock.set(LATER);
  return data!.data.added[0];
}

const getById = (contactId: string, owner = ws) =>
  owner.client.GET('/v1/contact/get', { params: { query: { contactId } } });

describe('GET /v1/contact/get', () => {
  it('finds a contact by id, and by campaign and address in any case', async () => {
    const contact = await jane();
    expect(contact).toMatchObject({
      email: 'jane.doe@acme.com',
      customVariables: { plan: 'Growth', seats: 12 },
      createdAt: CREATED,
    });
    const byId = await getById(contact.id);
    expect(byId.data).toEqual({
      status: 'success',
      success: true,
      message: 'Contact retrieved',
      data: { contact, progress: null, recipientProvider: null },
    });
    const byEmail = await ws.client.GET('/v1/contact/get', {
      params: { query: { campaignId: contact.campaignId, email: 'JANE.DOE@Acme.com' } },
    });
    expect(byEmail.data!.data.contact).toEqual(contact);
    // Sent by hand, with `@` not percent-encoded, as curl users do.
    const raw = await t.fetch(`/v1/contact/get?campaignId=${contact.campaignId}&email=jane.doe@acme.com`, {
      apiKey: ws.apiKey,
    });
    expect((await readJson<Success<'/v1/contact/get', 'get'>>(raw)).data.contact).toEqual(contact);
  });

  it("answers 404 for another workspace's contact and campaign exactly like missing ones", async () => {
    const theirs = await jane(other);
    for (const contactId of [theirs.id, newId()]) {
      const res = await t.fetch(`/v1/contact/get?contactId=${contactId}`, { apiKey: ws.apiKey });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Contact not found.' });
    }
    const viaCampaign = await t.fetch(`/v2/contact/get?campaignId=${theirs.campaignId}&email=jane.doe@acme.com`, {
      apiKey: ws.apiKey,
    });
    await expectV2Error(viaCampaign, 404, 'not_found', 'Campaign not found.', []);
    const mine = await jane();
    const unknownEmail = await t.fetch(`/v1/contact/get?campaignId=${mine.campaignId}&email=nobody@acme.com`, {
      apiKey: ws.apiKey,
    });
    expect(await unknownEmail.json()).toEqual({ error: 'Contact not found.' });
  });

  it('needs contactId, or campaignId and email, and not both', async () => {
    const contact = await jane();
    const none = await t.fetch('/v2/contact/get', { apiKey: ws.apiKey });
    await expectV2Error(
      none,
      400,
      'validation_error',
      'Send contactId, or campaignId and email, to name the contact.',
      [
        {
          field: 'query.contactId',
          location: 'query',
          message: "must have required property 'contactId'",
          code: 'required',
        },
      ],
    );
    const onlyCampaign = await t.fetch(`/v2/contact/get?campaignId=${contact.campaignId}`, { apiKey: ws.apiKey });
    await expectV2Error(onlyCampaign, 400, 'validation_error', 'email is required with campaignId.', [
      { field: 'query.email', location: 'query', message: "must have required property 'email'", code: 'required' },
    ]);
    const both = await t.fetch(`/v1/contact/get?contactId=${contact.id}&email=jane.doe@acme.com`, {
      apiKey: ws.apiKey,
    });
    expect(both.status).toBe(400);
    expect(await both.json()).toEqual({
      error: 'Name the contact by contactId, or by campaignId and email, not both.',
    });
    const badId = await t.fetch('/v1/contact/get?contactId=42', { apiKey: ws.apiKey });
    expect(await badId.json()).toEqual({ error: 'request/query/contactId must match format "uuid"' });
  });
});

describe('POST /v1/contact/delete', () => {
  it('deletes by id, answers the contact as it was, and frees the address', async () => {
    const contact = await jane();
    const { data } = await ws.client.POST('/v1/contact/delete', { body: { contactId: contact.id } });
    expect(data).toEqual({ status: 'success', success: true, message: 'Contact deleted', data: { contact } });
    expect((await getById(contact.id)).response.status).toBe(404);
    const again = await post(t, ws, '/v1/contact/delete', { contactId: contact.id });
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({ error: 'Contact not found.' });
    const readd = await ws.client.POST('/v1/contact/add', {
      body: { campaignId: contact.campaignId, contacts: [{ email: 'jane.doe@acme.com' }] },
    });
    expect(readd.data!.data.counts.added).toBe(1);
  });

  it('deletes by campaign and address, and keeps its email events without the link', async () => {
    const contact = await jane();
    const eventId = newId();
    await t.db('email_events').insert({
      id: eventId,
      workspace_id: ws.workspaceId,
      campaign_id: contact.campaignId,
      contact_id: contact.id,
      type: 'sent',
      occurred_at: t.clock.now(),
    });
    const { data } = await ws.client.POST('/v1/contact/delete', {
      body: { campaignId: contact.campaignId, email: 'jane.doe@acme.com' },
    });
    expect(data!.data.contact.id).toBe(contact.id);
    expect(await contactRows(t, contact.campaignId)).toEqual([]);
    expect(await t.db('email_events').where({ id: eventId }).first('contact_id', 'campaign_id')).toEqual({
      contact_id: null,
      campaign_id: contact.campaignId,
    });
  });

  it("answers 404 for another workspace's contact and leaves it in place", async () => {
    const theirs = await jane(other);
    const res = await post(t, ws, '/v2/contact/delete', { contactId: theirs.id });
    await expectV2Error(res, 404, 'not_found', 'Contact not found.', []);
    expect((await getById(theirs.id, other)).data!.data.contact).toEqual(theirs);
  });

  it('rejects an empty body and unknown fields', async () => {
    const empty = await post(t, ws, '/v1/contact/delete', {});
    expect(await empty.json()).toEqual({ error: 'Send contactId, or campaignId and email, to name the contact.' });
    const unknown = await post(t, ws, '/v2/contact/delete', { id: newId() });
    expect((await readJson<ErrorBody>(unknown)).details).toEqual([
      {
        field: 'body.id',
        location: 'body',
        message: 'must NOT have additional properties',
        code: 'additionalProperties',
      },
    ]);
  });
});

describe('POST /v1/contact/update/status', () => {
  it('sets a lead status and clears it with null, moving updatedAt', async () => {
    const contact = await jane();
    const { data } = await ws.client.POST('/v1/contact/update/status', {
      body: { contactId: contact.id, leadStatus: 'meetingBooked' },
    });
    expect(data).toEqual({
      status: 'success',
      success: true,
      message: 'Lead status updated',
      data: { contact: { ...contact, leadStatus: 'meetingBooked', updatedAt: LATER } },
    });

    t.clock.set('2026-11-25T09:00:00.000Z');
    const cleared = await ws.client.POST('/v1/contact/update/status', {
      body: { campaignId: contact.campaignId, email: 'jane.doe@acme.com', leadStatus: null },
    });
    expect(cleared.data!.data.contact).toEqual({ ...contact, leadStatus: null, updatedAt: '2026-11-25T09:00:00.000Z' });
    expect((await getById(contact.id)).data!.data.contact.leadStatus).toBeNull();
  });

  it('accepts every lead status of the brief', async () => {
    const contact = await jane();
    for (const leadStatus of [
      'interested',
      'meetingBooked',
      'meetingCompleted',
      'closed',
      'outOfOffice',
      'notInterested',
      'wrongPerson',
      'lost',
    ] as const) {
      const { data } = await ws.client.POST('/v1/contact/update/status', {
        body: { contactId: contact.id, leadStatus },
      });
      expect(data!.data.contact.leadStatus).toBe(leadStatus);
    }
  });

  it('rejects an unknown or missing lead status, in both formats, and changes nothing', async () => {
    const contact = await jane();
    const v1 = await post(t, ws, '/v1/contact/update/status', { contactId: contact.id, leadStatus: 'hot' });
    expect(v1.status).toBe(400);
    expect((await readJson<V1ErrorBody>(v1)).error).toMatch(
      /^request\/body\/leadStatus must be equal to one of the allowed values: interested, meetingBooked, /,
    );
    const v2 = await post(t, ws, '/v2/contact/update/status', { contactId: contact.id });
    await expectV2Error(v2, 400, 'validation_error', "request/body must have required property 'leadStatus'", [
      {
        field: 'body.leadStatus',
        location: 'body',
        message: "must have required property 'leadStatus'",
        code: 'required',
      },
    ]);
    expect((await getById(contact.id)).data!.data.contact).toEqual(contact);
  });

  it("answers 404 for another workspace's contact and leaves it unchanged", async () => {
    const theirs = await jane(other);
    const res = await post(t, ws, '/v1/contact/update/status', { contactId: theirs.id, leadStatus: 'lost' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Contact not found.' });
    expect((await getById(theirs.id, other)).data!.data.contact.leadStatus).toBeNull();
  });
});

describe('custom variables', () => {
  describe('POST /v1/contact/data/update', () => {
    it('merges: adds and overwrites the keys sent, keeps the others, stores null', async () => {
      const contact = await jane();
      const { data } = await ws.client.POST('/v1/contact/data/update', {
        body: { contactId: contact.id, customVariables: { seats: 15, trialUser: false, referrer: null } },
      });
      expect(data).toEqual({
        status: 'success',
        success: true,
        message: 'Custom variables updated',
        data: {
          contact: {
            ...contact,
            customVariables: { plan: 'Growth', seats: 15, trialUser: false, referrer: null },
            updatedAt: LATER,
          },
        },
      });
    });

    it('allows a merge up to 50 variables and refuses one that would exceed them, changing nothing', async () => {
      const contact = await jane(ws, Object.fromEntries(Array.from({ length: 45 }, (_, i) => [`k${i}`, i])));
      const keys = (from: number, to: number) =>
        Object.fromEntries(Array.from({ length: to - from }, (_, i) => [`k${from + i}`, 'x']));
      const fifty = await ws.client.POST('/v1/contact/data/update', {
        body: { contactId: contact.id, customVariables: keys(40, 50) },
      });
      expect(Object.keys(fifty.data!.data.contact.customVariables)).toHaveLength(50);

      const res = await post(t, ws, '/v2/contact/data/update', {
        contactId: contact.id,
        customVariables: keys(49, 51),
      });
      await expectV2Error(
        res,
        400,
        'validation_error',
        'The contact would have 51 custom variables; at most 50 are allowed.',
        [
          {
            field: 'body.customVariables',
            location: 'body',
            message: 'must NOT have more than 50 properties once merged (would have 51)',
            code: 'maxProperties',
          },
        ],
      );
      expect((await getById(contact.id)).data!.data.contact).toEqual(fifty.data!.data.contact);
    });

    it('rejects bad keys, object and array values, long strings and reserved names, in both formats', async () => {
      const contact = await jane();
      const badKey = await post(t, ws, '/v2/contact/data/update', {
        contactId: contact.id,
        customVariables: { 'first-name': 'x' },
      });
      expect(badKey.status).toBe(400);
      expect((await readJson<ErrorBody>(badKey)).details).toContainEqual(
        expect.objectContaining({ field: expect.stringMatching(/^body\.customVariables/), code: 'pattern' }),
      );
      const tooLongKey = await post(t, ws, '/v1/contact/data/update', {
        contactId: contact.id,
        customVariables: { ['k'.repeat(65)]: 'x' },
      });
      expect(tooLongKey.status).toBe(400);
      const nested = await post(t, ws, '/v1/contact/data/update', {
        contactId: contact.id,
        customVariables: { plan: { tier: 'gold' } },
      });
      expect(await nested.json()).toEqual({
        error: 'request/body/customVariables/plan must be string,number,boolean,null',
      });
      const array = await post(t, ws, '/v2/contact/data/update', {
        contactId: contact.id,
        customVariables: { tags: ['a'] },
      });
      expect((await readJson<ErrorBody>(array)).details).toEqual([
        {
          field: 'body.customVariables.tags',
          location: 'body',
          message: 'must be string,number,boolean,null',
          code: 'type',
        },
      ]);
      const long = await post(t, ws, '/v1/contact/data/update', {
        contactId: contact.id,
        customVariables: { note: 'n'.repeat(1001) },
      });
      expect(await long.json()).toEqual({
        error: 'request/body/customVariables/note must NOT have more than 1000 characters',
      });
      const reserved = await post(t, ws, '/v2/contact/data/update', {
        contactId: contact.id,
        customVariables: { email: 'x@y.com', companyName: 'Y' },
      });
      await expectV2Error(
        reserved,
        400,
        'validation_error',
        'Custom variable names cannot be built-in contact fields: email, companyName.',
        [
          {
            field: 'body.customVariables.email',
            location: 'body',
            message: '"email" is a built-in contact field and cannot be a custom variable',
            code: 'reserved',
          },
          {
            field: 'body.customVariables.companyName',
            location: 'body',
            message: '"companyName" is a built-in contact field and cannot be a custom variable',
            code: 'reserved',
          },
        ],
      );
      expect((await getById(contact.id)).data!.data.contact).toEqual(contact);
    });

    it("answers 404 for another workspace's contact and leaves it unchanged", async () => {
      const theirs = await jane(other);
      const res = await post(t, ws, '/v1/contact/data/update', {
        contactId: theirs.id,
        customVariables: { plan: 'Hijacked' },
      });
      expect(res.status).toBe(404);
      expect((await getById(theirs.id, other)).data!.data.contact.customVariables).toEqual({
        plan: 'Growth',
        seats: 12,
      });
    });
  });

  describe('POST /v1/contact/data/set', () => {
    it('replaces every variable, and {} clears them', async () => {
      const contact = await jane();
      const { data } = await ws.client.POST('/v1/contact/data/set', {
        body: {
          campaignId: contact.campaignId,
          email: 'jane.doe@acme.com',
          customVariables: { plan: 'Enterprise', renewalDate: '2027-03-01' },
        },
      });
      expect(data).toEqual({
        status: 'success',
        success: true,
        message: 'Custom variables set',
        data: {
          contact: { ...contact, customVariables: { plan: 'Enterprise', renewalDate: '2027-03-01' }, updatedAt: LATER },
        },
      });
      const cleared = await ws.client.POST('/v1/contact/data/set', {
        body: { contactId: contact.id, customVariables: {} },
      });
      expect(cleared.data!.data.contact.customVariables).toEqual({});
    });

    it('rejects a missing customVariables and a reserved name, changing nothing', async () => {
      const contact = await jane();
      const missing = await post(t, ws, '/v1/contact/data/set', { contactId: contact.id });
      expect(await missing.json()).toEqual({ error: "request/body must have required property 'customVariables'" });
      const reserved = await post(t, ws, '/v1/contact/data/set', {
        contactId: contact.id,
        customVariables: { phone: '1' },
      });
      expect(await reserved.json()).toEqual({
        error: 'Custom variable names cannot be built-in contact fields: phone.',
      });
      expect((await getById(contact.id)).data!.data.contact).toEqual(contact);
    });

    it("answers 404 for another workspace's campaign", async () => {
      const theirs = await jane(other);
      const res = await post(t, ws, '/v2/contact/data/set', {
        campaignId: theirs.campaignId,
        email: 'jane.doe@acme.com',
        customVariables: {},
      });
      await expectV2Error(res, 404, 'not_found', 'Campaign not found.', []);
      expect((await getById(theirs.id, other)).data!.data.contact).toEqual(theirs);
    });
  });

  describe('POST /v1/contact/data/remove', () => {
    it('removes the keys the contact has and reports the others', async () => {
      const contact = await jane();
      const { data } = await ws.client.POST('/v1/contact/data/remove', {
        body: { contactId: contact.id, keys: ['plan', 'renewalDate', 'plan'] },
      });
      expect(data).toEqual({
        status: 'success',
        success: true,
        message: '1 custom variable removed',
        data: {
          contact: { ...contact, customVariables: { seats: 12 }, updatedAt: LATER },
          removed: ['plan'],
          notFound: ['renewalDate'],
        },
      });
    });

    it('changes nothing, updatedAt included, when no key is present', async () => {
      const contact = await jane();
      const { data } = await ws.client.POST('/v1/contact/data/remove', {
        body: { campaignId: contact.campaignId, email: 'jane.doe@acme.com', keys: ['nope'] },
      });
      expect(data!.message).toBe('0 custom variables removed');
      expect(data!.data).toEqual({ contact, removed: [], notFound: ['nope'] });
    });

    it('rejects an empty list, a bad key and more than 50 keys', async () => {
      const contact = await jane();
      const empty = await post(t, ws, '/v2/contact/data/remove', { contactId: contact.id, keys: [] });
      await expectV2Error(empty, 400, 'validation_error', 'request/body/keys must NOT have fewer than 1 items', [
        { field: 'body.keys', location: 'body', message: 'must NOT have fewer than 1 items', code: 'minItems' },
      ]);
      const bad = await post(t, ws, '/v1/contact/data/remove', { contactId: contact.id, keys: ['ok', 'not ok'] });
      expect(await bad.json()).toEqual({
        error: 'request/body/keys/1 must match pattern "^[A-Za-z_][A-Za-z0-9_]{0,63}$"',
      });
      const many = await post(t, ws, '/v1/contact/data/remove', {
        contactId: contact.id,
        keys: Array.from({ length: 51 }, (_, i) => `k${i}`),
      });
      expect(many.status).toBe(400);
      expect((await getById(contact.id)).data!.data.contact).toEqual(contact);
    });

    it("answers 404 for another workspace's contact", async () => {
      const theirs = await jane(other);
      const res = await post(t, ws, '/v2/contact/data/remove', { contactId: theirs.id, keys: ['plan'] });
      await expectV2Error(res, 404, 'not_found', 'Contact not found.', []);
      expect((await getById(theirs.id, other)).data!.data.contact).toEqual(theirs);
    });
  });
});
