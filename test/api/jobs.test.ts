import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { addCampaign } from './contact.helpers';

let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
});
afterAll(() => t.close());

const csv = (campaignId: string, text: string, query = '') =>
  t.fetch(`/v2/job/contact-import?campaignId=${campaignId}${query}`, { method: 'POST', apiKey: ws.apiKey, headers: { 'Content-Type': 'text/csv' }, body: text });

async function drain(): Promise<void> {
  while ((await t.services.jobs.runOnce()) > 0);
}

it('smoke', async () => {
  const campaignId = await addCampaign(t, ws);
  const res = await csv(campaignId, 'Email,First Name,City\njane@acme.com,Jane,Austin\nbad,,\njane@acme.com,J,\n');
  const body = await res.json();
  console.log(res.status, JSON.stringify(body));
  await drain();
  const got = await ws.client.GET('/v2/job/get', { params: { query: { jobId: body.data.job.id } } });
  console.log(JSON.stringify(got.data));
  const r = await t.fetch(`/v2/job/results?jobId=${body.data.job.id}`, { apiKey: ws.apiKey });
  console.log(r.status, await r.text());
});
