import { readJson, type ErrorBody, type Success } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import { amy, bob, carla, insertFixtures, jane, luis, northwind } from './people-search-fixtures';
import { createCampaign } from './campaign-helpers';

let t: TestServer;
/** Shares Jane's work email: two members, one address. */
const janeTwin = { ...jane, id: '0192f0c5-0006-7000-8000-000000000006', first_name: 'Janet' };
beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
  await t.db('people').insert(janeTwin);
});
afterAll(() => t.close());

async function peopleList(ws: TestWorkspace, personIds: string[]) {
  const { data } = await ws.client.POST('/v2/list/create/people', { body: { name: `Send ${newId()}` } });
  const list = data!.data.list;
  await ws.client.POST('/v2/list/add/leads', { body: { listId: list.id, personIds } });
  return list;
}

/** The success body unless the test reads an error (`send<ErrorBody>`). */
async function send<T = Success<'/v2/list/send-to-campaign', 'post'>>(
  ws: TestWorkspace,
  listId: string,
  campaignId: string,
) {
  const res = await t.fetch('/v2/list/send-to-campaign', {
    method: 'POST',
    apiKey: ws.apiKey,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ listId, campaignId }),
  });
  return { status: res.status, body: await readJson<T>(res) };
}

const count = async (table: string, where: Record<string, unknown>) =>
  Number((await t.db(table).where(where).count('* as n'))[0].n);

describe('POST /v2/list/send-to-campaign', () => {
  it('reveals and charges unrevealed emails, skips people without one, and never duplicates a contact', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const campaign = await createCampaign(ws);
    // Amy's email was revealed before (free now); Luis's address is already a contact of the campaign.
    await t.db('people_reveals').insert({
      workspace_id: ws.workspaceId,
      person_id: amy.id,
      data_option: 'workEmailReveal',
      revealed_at: t.clock.now(),
    });
    await t.db('contacts').insert({
      id: newId(),
      workspace_id: ws.workspaceId,
      campaign_id: campaign.id,
      email: 'lortega@brightpathlogistics.com',
      created_at: t.clock.now(),
      updated_at: t.clock.now(),
    });
    const list = await peopleList(ws, [jane.id, luis.id, amy.id, bob.id, carla.id, janeTwin.id]);

    const res = await send(ws, list.id, campaign.id);
    expect(res).toEqual({
      status: 200,
      body: {
        status: 'success',
        success: true,
        message: '2 contacts added, 2 duplicates, 2 without email, 0 invalid',
        data: {
          listId: list.id,
          campaignId: campaign.id,
          counts: { members: 6, added: 2, duplicates: 2, skippedNoEmail: 2, invalid: 0 },
          credits: { used: 3, remaining: 7 },
        },
      },
    });
    const contacts = await t
      .db('contacts')
      .where({ campaign_id: campaign.id })
      .orderBy('email')
      .select('email', 'first_name', 'last_name', 'job_title', 'company_name', 'person_id');
    expect(contacts).toEqual([
      {
        email: 'amy.chen@northwindanalytics.com',
        first_name: 'Amy',
        last_name: 'Chen',
        job_title: 'Senior Software Engineer',
        company_name: 'Northwind Analytics',
        person_id: amy.id,
      },
      {
        email: 'jane.doe@northwindanalytics.com',
        first_name: 'Jane',
        last_name: 'Doe',
        job_title: 'Sales Director',
        company_name: 'Northwind Analytics',
        person_id: jane.id,
      },
      {
        email: 'lortega@brightpathlogistics.com',
        first_name: null,
        last_name: null,
        job_title: null,
        company_name: null,
        person_id: null,
      },
    ]);
    const revealed = await t
      .db('people_reveals')
      .where({ workspace_id: ws.workspaceId, data_option: 'workEmailReveal' })
      .orderBy('person_id')
      .pluck('person_id');
    expect(revealed).toEqual([jane.id, luis.id, amy.id, janeTwin.id].sort());
    const ledger = await t
      .db('credit_ledger')
      .where({ workspace_id: ws.workspaceId })
      .andWhere('amount', '<', 0)
      .select('amount', 'balance_after');
    expect(ledger).toEqual([{ amount: -3, balance_after: 7 }]);

    // The list now shows the revealed emails.
    const leads = await ws.client.GET('/v2/list/leads', { params: { query: { listId: list.id } } });
    expect(leads.data!.data.items.find((p) => p.id === luis.id)).toMatchObject({
      email: 'lortega@brightpathlogistics.com',
      revealed: ['workEmailReveal'],
    });

    // Sending again adds nothing and costs nothing.
    const again = await send(ws, list.id, campaign.id);
    expect(again.body.data).toMatchObject({
      counts: { members: 6, added: 0, duplicates: 4, skippedNoEmail: 2, invalid: 0 },
      credits: { used: 0, remaining: 7 },
    });
    expect(await count('contacts', { campaign_id: campaign.id })).toBe(3);
  });

  it('answers 402 and does nothing when the credits cannot cover the reveals', async () => {
    const ws = await t.createWorkspace({ credits: 2 });
    const campaign = await createCampaign(ws);
    const list = await peopleList(ws, [jane.id, luis.id, amy.id, bob.id]);
    const res = await send<ErrorBody>(ws, list.id, campaign.id);
    expect(res).toMatchObject({
      status: 402,
      body: {
        error: 'Insufficient credits: this request needs 3 credits and the balance is 2.',
        code: 'insufficient_credits',
      },
    });
    expect(await count('contacts', { campaign_id: campaign.id })).toBe(0);
    expect(await count('people_reveals', { workspace_id: ws.workspaceId })).toBe(0);
    expect(await t.services.credits.balance(t.db, ws.workspaceId)).toBe(2);
  });

  it('rolls everything back when the plan contact cap refuses the contacts', async () => {
    const ws = await t.createWorkspace({ credits: 50 });
    const planId = newId();
    await t.db('plans').insert({
      id: planId,
      name: 'Tiny',
      per_min: 1000,
      per_hour: 1000,
      per_day: 1000,
      credits: 0,
      max_contacts: 1,
      created_at: t.clock.now(),
    });
    await t.db('workspaces').where({ id: ws.workspaceId }).update({ plan_id: planId });
    const campaign = await createCampaign(ws);
    const list = await peopleList(ws, [jane.id, luis.id]);
    const res = await send<ErrorBody>(ws, list.id, campaign.id);
    expect(res.status).toBe(403);
    expect(await count('contacts', { campaign_id: campaign.id })).toBe(0);
    expect(await count('people_reveals', { workspace_id: ws.workspaceId })).toBe(0);
    expect(await t.services.credits.balance(t.db, ws.workspaceId)).toBe(50);
  });

  it('sends only people lists, only to the workspace own campaigns', async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const foreignCampaign = await createCampaign(other);
    const list = await peopleList(ws, [jane.id]);
    const { data } = await ws.client.POST('/v2/list/create/company', { body: { name: 'Companies' } });
    const companies = data!.data.list;
    await ws.client.POST('/v2/list/add/companies', { body: { listId: companies.id, companyIds: [northwind.id] } });

    expect(await send(ws, companies.id, campaign.id)).toMatchObject({
      status: 409,
      body: {
        error: 'This list is a company list: only people lists can be sent to a campaign.',
        details: [{ field: 'body.listId', code: 'wrongKind' }],
      },
    });
    expect(await send(ws, list.id, foreignCampaign.id)).toMatchObject({
      status: 404,
      body: { error: 'Campaign not found.' },
    });
    expect(await send(other, list.id, foreignCampaign.id)).toMatchObject({
      status: 404,
      body: { error: 'List not found.' },
    });
    expect(await send(ws, list.id, 'nope')).toMatchObject({
      status: 400,
      body: { details: [{ field: 'body.campaignId' }] },
    });
    expect(await count('contacts', { workspace_id: other.workspaceId })).toBe(0);
    expect(await count('people_reveals', { workspace_id: ws.workspaceId })).toBe(0);
  });

  it('sends a list larger than one batch', async () => {
    const ws = await t.createWorkspace({ credits: 5000 });
    const campaign = await createCampaign(ws);
    const rows = Array.from({ length: 2500 }, (_, i) => ({
      ...luis,
      id: newId(),
      work_email: `lead${i}@bulk-example.com`,
    }));
    for (let i = 0; i < rows.length; i += 500) await t.db('people').insert(rows.slice(i, i + 500));
    const { data } = await ws.client.POST('/v2/list/create/people', { body: { name: 'Bulk' } });
    const listId = data!.data.list.id;
    for (let i = 0; i < rows.length; i += 1000) {
      await ws.client.POST('/v2/list/add/leads', {
        body: { listId, personIds: rows.slice(i, i + 1000).map((r) => r.id) },
      });
    }
    const res = await send(ws, listId, campaign.id);
    expect(res.body.data).toMatchObject({
      counts: { members: 2500, added: 2500, duplicates: 0, skippedNoEmail: 0, invalid: 0 },
      credits: { used: 2500, remaining: 2500 },
    });
    expect(await count('contacts', { campaign_id: campaign.id })).toBe(2500);
  });
});
