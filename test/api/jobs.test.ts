/**
 * Background jobs through HTTP: CSV and JSON contact imports with every skip and its reason, the
 * results file (formula cells escaped), bad files (400 naming the line, nothing queued), verify and enrich
 * jobs (402 up front, charged once), cancel mid-job, another workspace's job, Idempotency-Key, the list,
 * and the job.completed / job.failed webhooks. The worker is driven by calling its runOnce.
 */
import { expect } from '@jest/globals';
import type { WorkspaceRow } from '../../server/modules/workspace/store';
import { readHook, readJson, type ErrorBody, type Success } from '../helpers/bodies';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { found } from '../helpers/rows';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { addCampaign, contactRows } from './contact.helpers';
import { amy, insertFixtures, jane, luis } from './people-search-fixtures';

// The first upload warms the validator and the embedded database; slow on a busy machine.
jest.setTimeout(120_000);

let t: TestServer;
let ws: TestWorkspace;
let dns: TestDnsServer;
let receiver: WebhookReceiver;
beforeAll(async () => {
  dns = await startDnsServer({
    'acme.com': { MX: [{ exchange: 'mx.acme.com', priority: 10 }] },
    'mailinator.com': { MX: [{ exchange: 'mx.mailinator.com', priority: 10 }] },
  });
  receiver = await startWebhookReceiver();
  // Batches of 2 rows, one at a time, so a few rows make several runs of the worker.
  t = await startTestServer({
    config: {
      jobBatchSize: 2,
      jobConcurrency: 1,
      dnsServers: [dns.address],
      dnsTimeoutMs: 300,
      secretKey: '88'.repeat(32),
      allowPrivateWebhooks: true,
    },
  });
  ws = await t.createWorkspace();
  await insertFixtures(t.db);
});
afterAll(async () => {
  await t.close();
  await dns.close();
  await receiver.close();
});

/** What each job-creating operation answers with 202: the job. */
type Accepted = Success<'/v2/job/contact-import' | '/v2/job/verify' | '/v2/job/enrich', 'post'>;

const upload = (path: string, text: string | Buffer, workspace = ws, headers: Record<string, string> = {}) =>
  t.fetch(path, {
    method: 'POST',
    apiKey: workspace.apiKey,
    headers: { 'Content-Type': 'text/csv', ...headers },
    body: typeof text === 'string' ? text : new Blob([new Uint8Array(text)]),
  });
const postJson = (path: string, body: unknown, workspace = ws) =>
  t.fetch(path, {
    method: 'POST',
    apiKey: workspace.apiKey,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

async function drain(): Promise<number> {
  let total = 0;
  for (let n = await t.services.jobs.runOnce(); n > 0; n = await t.services.jobs.runOnce()) total += n;
  return total;
}
const getJob = async (jobId: string, workspace = ws) =>
  (await workspace.client.GET('/v2/job/get', { params: { query: { jobId } } })).data!.data.job;
async function results(jobId: string, workspace = ws): Promise<string[]> {
  const res = await t.fetch(`/v2/job/results?jobId=${jobId}`, { apiKey: workspace.apiKey });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
  return (await res.text()).trimEnd().split('\n');
}
const jobCount = async () => Number((await t.db('jobs').count({ n: '*' }).first())!.n);
const rowCount = async () => Number((await t.db('job_rows').count({ n: '*' }).first())!.n);

describe('contact import from CSV', () => {
  it('maps columns, creates contacts, and skips with a reason per row', async () => {
    const campaignId = await addCampaign(t, ws);
    const other = await addCampaign(t, ws);
    expect(
      (await ws.client.POST('/v1/contact/add', { body: { campaignId, contacts: [{ email: 'held@acme.com' }] } }))
        .response.status,
    ).toBe(200);
    expect(
      (
        await ws.client.POST('/v1/contact/add', {
          body: { campaignId: other, contacts: [{ email: 'elsewhere@acme.com' }] },
        })
      ).response.status,
    ).toBe(200);
    expect(
      (await ws.client.POST('/v2/suppression/add', { body: { values: ['blocked@acme.com'] } })).response.status,
    ).toBe(200);

    const file = [
      'Email Address,First Name,last_name,Company,Plan Tier,=cmd',
      'Jane@Acme.com,Jane,Doe,Acme,Gold,x',
      'held@acme.com,,,,,',
      'elsewhere@acme.com,,,,,',
      'blocked@acme.com,,,,,',
      'jane@acme.com,Janet,,,,',
      'not-an-address,,,,,',
      '"=HYPERLINK(""http://x"")",,,,,',
      ',No,Email,,,',
      'temp@mailinator.com,,,,,',
    ].join('\r\n');
    const res = await upload(`/v2/job/contact-import?campaignId=${campaignId}&skipInWorkspace=true`, file);
    expect(res.status).toBe(202);
    const { data } = await readJson<Accepted>(res);
    expect(data.job).toMatchObject({
      type: 'contactImport',
      status: 'queued',
      progress: { total: 9, processed: 0 },
      counts: { created: 0, skipped: 0, invalid: 0 },
      campaignId,
    });
    expect(data.job.options).toEqual({
      skipInWorkspace: true,
      skipInAnyList: false,
      skipSuppressed: true,
      verify: false,
    });

    expect(await drain()).toBe(9);
    const job = await getJob(data.job.id);
    expect(job).toMatchObject({
      status: 'completed',
      progress: { total: 9, processed: 9 },
      counts: { created: 2, skipped: 4, invalid: 3 },
      error: null,
    });
    expect(job.startedAt).not.toBeNull();
    expect(job.finishedAt).not.toBeNull();

    const rows = await contactRows(t, campaignId);
    const jane = rows.find((r) => r.email === 'jane@acme.com')!;
    expect(jane).toMatchObject({
      first_name: 'Jane',
      last_name: 'Doe',
      company_name: 'Acme',
      custom_variables: { Plan_Tier: 'Gold', _cmd: 'x' },
    });
    const temp = rows.find((r) => r.email === 'temp@mailinator.com')!;
    expect(rows.map((r) => r.email).sort()).toEqual(['held@acme.com', 'jane@acme.com', 'temp@mailinator.com']);

    expect(await results(data.job.id)).toEqual([
      'row,email,outcome,reason,contactId',
      `1,Jane@Acme.com,created,,${jane.id}`,
      '2,held@acme.com,skipped,alreadyInCampaign,',
      '3,elsewhere@acme.com,skipped,alreadyInWorkspace,',
      '4,blocked@acme.com,skipped,suppressed,',
      '5,jane@acme.com,skipped,duplicateInFile,',
      '6,not-an-address,invalid,invalidEmail,',
      `7,"'=HYPERLINK(""http://x"")",invalid,invalidEmail,`,
      '8,,invalid,invalidEmail,',
      `9,temp@mailinator.com,created,,${temp.id}`,
    ]);
  });

  it('verifies on import and keeps suppressed addresses when told to', async () => {
    const campaignId = await addCampaign(t, ws);
    await ws.client.POST('/v2/suppression/add', { body: { values: ['again@acme.com'] } });
    const res = await upload(
      `/v2/job/contact-import?campaignId=${campaignId}&verify=true&skipSuppressed=false`,
      'email\nok@acme.com\ntemp@mailinator.com\nnobody@no-such-domain.test\nagain@acme.com\n',
    );
    expect(res.status).toBe(202);
    const { data } = await readJson<Accepted>(res);
    await drain();
    expect((await getJob(data.job.id)).counts).toEqual({ created: 2, skipped: 2, invalid: 0 });
    expect((await results(data.job.id)).map((l) => l.split(',').slice(0, 4).join(','))).toEqual([
      'row,email,outcome,reason',
      '1,ok@acme.com,created,',
      '2,temp@mailinator.com,skipped,verifiedDisposable',
      '3,nobody@no-such-domain.test,skipped,verifiedInvalid',
      '4,again@acme.com,created,',
    ]);
  });

  it('answers 400 naming the line for a file it cannot read, and queues nothing', async () => {
    const campaignId = await addCampaign(t, ws);
    const before = await jobCount();
    const rowsBefore = await rowCount();
    const cases: [string | Buffer, string][] = [
      ['name,company\nJane,Acme\n', 'Line 1: no email column (a column named email is required)'],
      [
        'email;name\njane@acme.com;Jane\n',
        'Line 1: no email column: the header has one column holding ";"; separate columns with commas',
      ],
      [
        'email,name\na@acme.com,A\nb@acme.com\n',
        'Line 3: the row has another number of cells than the header (check the delimiter and the quotes)',
      ],
      [
        Buffer.concat([
          Buffer.from('email,name\na@acme.com,A\nb@acme.com,'),
          Buffer.from([0xff, 0xfe]),
          Buffer.from('\n'),
        ]),
        'Line 3: the file is not valid UTF-8 (save it as UTF-8)',
      ],
      [`email,note\na@acme.com,short\nb@acme.com,${'x'.repeat(70 * 1024)}\n`, 'Line 3: the row is longer than 64 KB'],
      ['email,name\na@acme.com,"never closed\n', 'Line 2: a quoted cell is never closed'],
      ['', 'Line 1: the file is empty (a header row is required)'],
    ];
    for (const [file, message] of cases) {
      const res = await upload(`/v2/job/contact-import?campaignId=${campaignId}`, file);
      expect(res.status).toBe(400);
      const body = await readJson<ErrorBody>(res);
      expect(body.error).toBe(message);
      expect(body.details).toEqual([
        { field: 'body.csv', location: 'body', message: message.replace(/^Line/, 'line'), code: 'csv' },
      ]);
    }
    expect(await jobCount()).toBe(before);
    expect(await rowCount()).toBe(rowsBefore);
    expect(await drain()).toBe(0);
  });

  it('needs the campaign in the query, and the campaign must be the workspace’s', async () => {
    expect((await upload('/v2/job/contact-import', 'email\na@acme.com\n')).status).toBe(400);
    const stranger = await t.createWorkspace();
    const theirs = await addCampaign(t, stranger);
    expect((await upload(`/v2/job/contact-import?campaignId=${theirs}`, 'email\na@acme.com\n')).status).toBe(404);
  });
});

describe('contact import into a people list', () => {
  const newList = async (workspace: TestWorkspace, name: string, kind: 'people' | 'company' = 'people') =>
    (
      await workspace.client.POST(kind === 'people' ? '/v2/list/create/people' : '/v2/list/create/company', {
        body: { name },
      })
    ).data!.data.list.id;
  /** The list's members, sorted; its kept member count (the page's total) must agree with them. */
  const members = async (workspace: TestWorkspace, listId: string) => {
    const { items, pagination } = (await workspace.client.GET('/v2/list/leads', { params: { query: { listId } } }))
      .data!.data;
    expect(pagination.total).toBe(items.length);
    return items.map((p) => p.id).sort();
  };

  it('adds the lead-database person of each address, skipping with a reason per row', async () => {
    const mine = await t.createWorkspace();
    const listId = await newList(mine, 'Target');
    const other = await newList(mine, 'Other');
    expect(
      (await mine.client.POST('/v2/list/add/leads', { body: { listId: other, personIds: [luis.id] } })).response.status,
    ).toBe(200);

    const file = [
      'Email,First Name',
      `${jane.work_email!.toUpperCase()},Jane`,
      `${luis.work_email},Luis`,
      'nobody@nowhere.io,',
      `${jane.work_email},`,
      'broken,',
    ].join('\n');
    const res = await upload(`/v2/job/contact-import?listId=${listId}&skipInAnyList=true`, file, mine);
    expect(res.status).toBe(202);
    const { data } = await readJson<Accepted>(res);
    expect(data.job).toMatchObject({
      type: 'contactImport',
      campaignId: null,
      listId,
      options: { skipInWorkspace: false, skipInAnyList: true, skipSuppressed: true, verify: false },
    });
    expect(await drain()).toBe(5);
    expect(await getJob(data.job.id, mine)).toMatchObject({
      status: 'completed',
      counts: { created: 1, skipped: 3, invalid: 1 },
    });
    expect(await members(mine, listId)).toEqual([jane.id]);
    expect(await results(data.job.id, mine)).toEqual([
      'row,email,outcome,reason,personId',
      `1,${jane.work_email!.toUpperCase()},created,,${jane.id}`,
      `2,${luis.work_email},skipped,alreadyInList,`,
      '3,nobody@nowhere.io,skipped,notInLeadDatabase,',
      `4,${jane.work_email},skipped,duplicateInFile,`,
      '5,broken,invalid,invalidEmail,',
    ]);

    // Without skipInAnyList a person of another list is added; one this list holds is still skipped.
    const again = (
      await readJson<Accepted>(
        await postJson(
          '/v2/job/contact-import',
          { listId, contacts: [{ email: jane.work_email }, { email: luis.work_email }] },
          mine,
        ),
      )
    ).data.job;
    await drain();
    expect((await results(again.id, mine)).slice(1)).toEqual([
      `1,${jane.work_email},skipped,alreadyInList,`,
      `2,${luis.work_email},created,,${luis.id}`,
    ]);
    expect(await members(mine, listId)).toEqual([jane.id, luis.id].sort());
  });

  it('skips addresses in any list on a campaign import too', async () => {
    const mine = await t.createWorkspace();
    const listId = await newList(mine, 'Held');
    await mine.client.POST('/v2/list/add/leads', { body: { listId, personIds: [amy.id] } });
    const campaignId = await addCampaign(t, mine);
    const { data } = await readJson<Accepted>(
      await upload(
        `/v2/job/contact-import?campaignId=${campaignId}&skipInAnyList=true`,
        `email\n${amy.work_email}\n${jane.work_email}\n`,
        mine,
      ),
    );
    await drain();
    expect((await results(data.job.id, mine)).map((l) => l.split(',').slice(0, 4).join(','))).toEqual([
      'row,email,outcome,reason',
      `1,${amy.work_email},skipped,alreadyInList`,
      `2,${jane.work_email},created,`,
    ]);
  });

  it('needs exactly one of campaignId and listId; another workspace’s list is a 404, a company list a 409', async () => {
    const mine = await t.createWorkspace();
    const listId = await newList(mine, 'Mine');
    const campaignId = await addCampaign(t, mine);
    const before = await jobCount();
    const both = await upload(
      `/v2/job/contact-import?campaignId=${campaignId}&listId=${listId}`,
      'email\na@acme.com\n',
      mine,
    );
    expect(both.status).toBe(400);
    expect((await readJson<ErrorBody>(both)).error).toBe('Give exactly one of campaignId and listId (in the query).');
    expect((await postJson('/v2/job/contact-import', { contacts: [{ email: 'a@acme.com' }] }, mine)).status).toBe(400);
    expect((await upload(`/v2/job/contact-import?listId=${listId}`, 'email\na@acme.com\n')).status).toBe(404);
    expect((await postJson('/v2/job/contact-import', { listId, contacts: [{ email: 'a@acme.com' }] })).status).toBe(
      404,
    );
    const companies = await newList(mine, 'Companies', 'company');
    expect((await upload(`/v2/job/contact-import?listId=${companies}`, 'email\na@acme.com\n', mine)).status).toBe(409);
    expect(await jobCount()).toBe(before);
  });
});

describe('contact import from JSON', () => {
  it('takes the options in the body and answers the same job for the same Idempotency-Key', async () => {
    const campaignId = await addCampaign(t, ws);
    const body = {
      campaignId,
      contacts: [
        { email: 'one@acme.com', customVariables: { tier: 1 } },
        { email: 'two@acme.com' },
        { email: 'one@acme.com' },
      ],
      skipSuppressed: false,
    };
    const send = () =>
      t.fetch('/v2/job/contact-import', {
        method: 'POST',
        apiKey: ws.apiKey,
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `import-${campaignId}` },
        body: JSON.stringify(body),
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const job = (await readJson<Accepted>(first)).data.job;
    expect((await readJson<Accepted>(again)).data.job.id).toBe(job.id);
    expect(job.options).toEqual({ skipInWorkspace: false, skipInAnyList: false, skipSuppressed: false, verify: false });
    await drain();
    expect((await getJob(job.id)).counts).toEqual({ created: 2, skipped: 1, invalid: 0 });
    expect((await contactRows(t, campaignId)).find((r) => r.email === 'one@acme.com')!.custom_variables).toEqual({
      tier: 1,
    });
  });

  it('refuses a custom variable named like a built-in field up front', async () => {
    const campaignId = await addCampaign(t, ws);
    const before = await jobCount();
    const res = await postJson('/v2/job/contact-import', {
      campaignId,
      contacts: [{ email: 'a@acme.com' }, { email: 'b@acme.com', customVariables: { email: 'x' } }],
    });
    expect(res.status).toBe(400);
    expect((await readJson<ErrorBody>(res)).details).toEqual([
      {
        field: 'body.contacts.1.customVariables.email',
        location: 'body',
        message: '"email" is a built-in contact field and cannot be a custom variable',
        code: 'reserved',
      },
    ]);
    expect(await jobCount()).toBe(before);
  });

  it('refuses more than 100,000 contacts', async () => {
    const campaignId = await addCampaign(t, ws);
    const res = await postJson('/v2/job/contact-import', {
      campaignId,
      contacts: Array.from({ length: 100_001 }, (_, i) => ({ email: `c${i}@acme.com` })),
    });
    expect(res.status).toBe(400);
  });
});

describe('cancel', () => {
  it('stops a job between batches; what was done stays; a second cancel is a 409 naming the state', async () => {
    const campaignId = await addCampaign(t, ws);
    const file = ['email', ...Array.from({ length: 6 }, (_, i) => `c${i}@acme.com`)].join('\n');
    const { data } = await readJson<Accepted>(await upload(`/v2/job/contact-import?campaignId=${campaignId}`, file));
    expect(await t.services.jobs.runOnce()).toBe(2);
    expect(await getJob(data.job.id)).toMatchObject({ status: 'running', progress: { total: 6, processed: 2 } });

    const cancelled = await ws.client.POST('/v2/job/cancel', { body: { jobId: data.job.id } });
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data!.data.job).toMatchObject({
      status: 'cancelled',
      progress: { total: 6, processed: 2 },
      counts: { created: 2 },
    });
    expect(await drain()).toBe(0);
    expect((await contactRows(t, campaignId)).length).toBe(2);
    const lines = await results(data.job.id);
    expect(lines.slice(3)).toEqual([
      '3,c2@acme.com,notProcessed,jobCancelled,',
      '4,c3@acme.com,notProcessed,jobCancelled,',
      '5,c4@acme.com,notProcessed,jobCancelled,',
      '6,c5@acme.com,notProcessed,jobCancelled,',
    ]);

    const again = await t.fetch('/v2/job/cancel', {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jobId: data.job.id }),
    });
    expect(again.status).toBe(409);
    expect((await readJson<ErrorBody>(again)).error).toBe(
      'The job is already cancelled; only a queued or running job can be cancelled.',
    );
  });
});

describe('verify and enrich jobs', () => {
  it('verifies addresses with the synchronous checks, one result per row', async () => {
    const res = await postJson('/v2/job/verify', {
      emails: ['ok@acme.com', 'temp@mailinator.com', 'broken', 'ok@acme.com'],
    });
    expect(res.status).toBe(202);
    const { data } = await readJson<Accepted>(res);
    await drain();
    expect((await getJob(data.job.id)).counts).toEqual({
      valid: 2,
      invalid: 1,
      catchAll: 0,
      unknown: 0,
      disposable: 1,
    });
    expect(await results(data.job.id)).toEqual([
      'row,email,outcome,reason,score,isRoleAccount,isFreeProvider,isDisposable,mxFound',
      '1,ok@acme.com,valid,,85,false,false,false,true',
      '2,temp@mailinator.com,disposable,disposableDomain,10,false,true,true,true',
      '3,broken,invalid,invalidSyntax,0,false,false,false,false',
      '4,ok@acme.com,valid,,85,false,false,false,true',
    ]);
  });

  it('asks DNS for a domain’s MX once per job for 5 minutes, and again after a timeout', async () => {
    const mxQueries = () => dns.queries.filter((q) => q.type === 'MX' && q.name.toLowerCase() === 'acme.com').length;
    const emails = Array.from({ length: 8 }, (_, i) => `mx-cache-${i}@acme.com`);
    const { data } = await readJson<Accepted>(await postJson('/v2/job/verify', { emails }));
    const before = mxQueries();
    // Batches of 2: the first asks, the second reads the job's cache.
    expect(await t.services.jobs.runOnce()).toBe(2);
    expect(await t.services.jobs.runOnce()).toBe(2);
    expect(mxQueries()).toBe(before + 1);
    // 5 minutes later the answer is asked again, once.
    t.clock.advance(300_001);
    expect(await drain()).toBe(4);
    expect(mxQueries()).toBe(before + 2);
    expect((await getJob(data.job.id)).counts).toMatchObject({ valid: 8 });

    // A timeout is not kept: the next batch asks again and gets the answer.
    const other = Array.from({ length: 4 }, (_, i) => `mx-timeout-${i}@acme.com`);
    const timedOut = (await readJson<Accepted>(await postJson('/v2/job/verify', { emails: other }))).data.job;
    dns.mode = 'silent';
    expect(await t.services.jobs.runOnce()).toBe(2);
    dns.mode = 'answer';
    expect(await drain()).toBe(2);
    expect((await getJob(timedOut.id)).counts).toMatchObject({ unknown: 2, valid: 2 });
    expect((await results(timedOut.id)).slice(1).map((l) => l.split(',')[3])).toEqual([
      'dnsTimeout',
      'dnsTimeout',
      '',
      '',
    ]);
  });

  it('verifies a CSV file by its email column', async () => {
    const { data } = await readJson<Accepted>(await upload('/v2/job/verify', 'name,E-mail\nA,ok@acme.com\n'));
    await drain();
    expect((await getJob(data.job.id)).counts.valid).toBe(1);
  });

  it('refuses an enrichment the balance cannot cover with 402, charging and queuing nothing', async () => {
    const poor = await t.createWorkspace({ credits: 1 });
    const before = await jobCount();
    const res = await postJson(
      '/v2/job/enrich',
      { people: [{ email: jane.work_email }, { email: luis.work_email }] },
      poor,
    );
    expect(res.status).toBe(402);
    expect((await readJson<ErrorBody>(res)).error).toBe(
      'Insufficient credits: this request needs 2 credits and the balance is 1.',
    );
    expect(await jobCount()).toBe(before);
    expect(
      (
        await found(
          t
            .db('workspaces')
            .where({ id: poor.workspaceId })
            .first<Pick<WorkspaceRow, 'credit_balance'> | undefined>('credit_balance'),
          'workspace',
        )
      ).credit_balance,
    ).toBe(1);
    expect(await t.db('people_reveals').where({ workspace_id: poor.workspaceId })).toEqual([]);
  });

  it('charges an enrichment once, up front, and writes each row’s match', async () => {
    const rich = await t.createWorkspace({ credits: 10 });
    const res = await postJson(
      '/v2/job/enrich',
      {
        people: [
          { email: jane.work_email },
          { email: 'nobody@nowhere.io' },
          { linkedinUrl: 'linkedin.com/in/jane-doe' },
          { email: luis.work_email },
        ],
      },
      rich,
    );
    expect(res.status).toBe(202);
    const { data } = await readJson<Accepted>(res);
    expect(data.job).toMatchObject({ type: 'enrich', credits: { charged: 2 }, dataOptions: ['workEmailReveal'] });
    expect(
      (
        await found(
          t
            .db('workspaces')
            .where({ id: rich.workspaceId })
            .first<Pick<WorkspaceRow, 'credit_balance'> | undefined>('credit_balance'),
          'workspace',
        )
      ).credit_balance,
    ).toBe(8);
    await drain();
    expect((await getJob(data.job.id, rich)).counts).toEqual({ matched: 3, unmatched: 1 });
    const lines = await results(data.job.id, rich);
    expect(lines[0]).toBe(
      'row,email,linkedinUrl,firstName,lastName,companyDomain,companyName,outcome,reason,personId,workEmail,mobilePhone,title,personLinkedinUrl,personCompanyName,personCompanyDomain',
    );
    expect(lines[1]).toBe(
      `1,${jane.work_email},,,,,,matched,email,${jane.id},${jane.work_email},,Sales Director,,Northwind Analytics,northwindanalytics.com`,
    );
    expect(lines[2]).toBe('2,nobody@nowhere.io,,,,,,unmatched,noMatch,,,,,,,');
    expect(lines[3]).toContain(`,matched,linkedinUrl,${jane.id},`);
    expect((await t.db('credit_ledger').where({ workspace_id: rich.workspaceId }).where('amount', '<', 0)).length).toBe(
      1,
    );
  });
});

describe('reading jobs', () => {
  it('lists newest first with filters, and hides another workspace’s jobs (404)', async () => {
    const mine = await t.createWorkspace();
    const a = (await readJson<Accepted>(await postJson('/v2/job/verify', { emails: ['a@acme.com'] }, mine))).data.job;
    t.clock.advance(1000);
    const b = (await readJson<Accepted>(await postJson('/v2/job/verify', { emails: ['b@acme.com'] }, mine))).data.job;
    const list = await mine.client.GET('/v2/job/list', { params: { query: {} } });
    expect(list.data!.data.items.map((j) => j.id)).toEqual([b.id, a.id]);
    const byStatus = await mine.client.GET('/v2/job/list', {
      params: { query: { type: 'verify', status: 'queued', limit: 1 } },
    });
    expect(byStatus.data!.data).toMatchObject({
      items: [{ id: b.id }],
      pagination: { limit: 1, skip: 0, total: 2, hasMore: true },
    });

    for (const [method, path] of [
      ['GET', `/v2/job/get?jobId=${a.id}`],
      ['GET', `/v2/job/results?jobId=${a.id}`],
    ] as const) {
      expect((await t.fetch(path, { method, apiKey: ws.apiKey })).status).toBe(404);
    }
    const cancel = await postJson('/v2/job/cancel', { jobId: a.id });
    expect(cancel.status).toBe(404);
    expect((await getJob(a.id, mine)).status).toBe('queued');
    await drain();
  });
});

describe('events', () => {
  it('delivers job.completed and job.failed to webhooks', async () => {
    const hooked = await t.createWorkspace();
    const sub = await hooked.client.POST('/v2/webhook/create', {
      body: { url: receiver.url, eventTypes: ['job.completed', 'job.failed'] },
    });
    expect(sub.response.status).toBe(201);
    const done = (await readJson<Accepted>(await postJson('/v2/job/verify', { emails: ['a@acme.com'] }, hooked))).data
      .job;
    const campaignId = await addCampaign(t, hooked);
    const failing = (
      await readJson<Accepted>(
        await upload(
          `/v2/job/contact-import?campaignId=${campaignId}`,
          'email\na@acme.com\nb@acme.com\nc@acme.com\n',
          hooked,
        ),
      )
    ).data.job;
    await t.services.jobs.runOnce(); // the verification
    await t.services.jobs.runOnce(); // the import's first batch
    await t.db('campaigns').where({ id: campaignId }).delete();
    await drain();
    expect(await getJob(failing.id, hooked)).toMatchObject({
      status: 'failed',
      error: 'Campaign not found.',
      progress: { processed: 2 },
    });

    while ((await t.services.webhooks.runOnce()) > 0);
    const events = receiver.received
      .map((h) => readHook<'job.completed' | 'job.failed'>(h))
      .filter((e) => e.workspaceId === hooked.workspaceId);
    expect(events.map((e) => [e.type, e.data.job.id, e.data.job.status])).toEqual(
      expect.arrayContaining([
        ['job.completed', done.id, 'completed'],
        ['job.failed', failing.id, 'failed'],
      ]),
    );
    expect(events).toHaveLength(2);
    expect(events.find((e) => e.type === 'job.completed')!.data.job).toEqual(await getJob(done.id, hooked));
  });
});
