/**
 * The world the contract and property tests call into: the real server on a fresh database, a DNS
 * server on loopback (vitals, verification), a lead database from the lead module's generator, a
 * whitelabel workspace with room to spare, a second workspace (whose resources must answer 404),
 * and builders that create campaigns, accounts, contacts, lists, plans and sub-users through the API.
 */
import { createClient, type ApiClient } from '../../client';
import { generateLeads } from '../../server/modules/leads/generate';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

export interface Fixture {
  t: TestServer;
  dns: TestDnsServer;
  ws: TestWorkspace;
  /** The typed client of client/ (no retries) with the main workspace's key. */
  c: ApiClient;
  other: TestWorkspace;
  otherC: ApiClient;
  /** A client whose key is unknown (401). */
  bad: ApiClient;
  clientFor(apiKey: string): ApiClient;
  account(client?: ApiClient): Promise<string>;
  campaign(client?: ApiClient, body?: Record<string, unknown>): Promise<string>;
  /** A campaign with one step of two variants. */
  step(client?: ApiClient): Promise<{ campaignId: string; stepId: string; variantIds: string[] }>;
  /** A subsequence (replyIntent question, one threaded step) of a new campaign. */
  subsequence(client?: ApiClient): Promise<string>;
  /** A campaign that can be launched: a step, a linked active account and a schedule. */
  ready(client?: ApiClient): Promise<{ campaignId: string; accountId: string }>;
  contact(client?: ApiClient): Promise<{ campaignId: string; contactId: string; email: string }>;
  list(kind: 'people' | 'company', client?: ApiClient): Promise<string>;
  personIds(n: number): Promise<string[]>;
  companyIds(n: number): Promise<string[]>;
  plan(): Promise<string>;
  subUser(): Promise<{ id: string; email: string }>;
  close(): Promise<void>;
}

export const SCHEDULE = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };
export const MAIL_DOMAIN = 'acme-mail.io';

function must<T>(what: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (!r.response.ok || r.data === undefined)
    throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data;
}

export async function startFixture(): Promise<Fixture> {
  const dns = await startDnsServer({
    [MAIL_DOMAIN]: {
      MX: [{ exchange: 'aspmx.l.google.com', priority: 1 }],
      TXT: ['v=spf1 include:_spf.google.com ~all'],
    },
    [`_dmarc.${MAIL_DOMAIN}`]: { TXT: ['v=DMARC1; p=reject'] },
    'northwindanalytics.com': { MX: [{ exchange: 'mx.northwindanalytics.com', priority: 10 }] },
  });
  const t = await startTestServer({
    config: {
      secretKey: '00'.repeat(32),
      dnsServers: [dns.address],
      dnsTimeoutMs: 300,
      allowPrivateWebhooks: true,
      // An OAuth provider that starts flows (none of its endpoints is called by the operations' entries).
      oauth: {
        google: null,
        microsoft: null,
        generic: {
          clientId: 'contract',
          clientSecret: 'secret',
          authorizeUrl: 'https://idp.example.test/authorize',
          tokenUrl: 'https://idp.example.test/token',
          userInfoUrl: 'https://idp.example.test/userinfo',
          scopes: ['openid', 'email', 'mail'],
          smtp: { host: 'smtp.example.test', port: 587 },
          imap: { host: 'imap.example.test', port: 993 },
        },
        returnUrls: [],
        timeoutMs: 1000,
      },
    },
  });
  await generateLeads(t.db, { people: 150, companies: 30, seed: 7, now: t.clock.now() });
  const ws = await t.createWorkspace({ name: 'Contract', whitelabel: true, credits: 1_000_000 });
  const other = await t.createWorkspace({ name: 'Other', whitelabel: true, credits: 1_000_000 });
  const clientFor = (apiKey: string) => createClient({ apiKey, baseUrl: t.url, retry: false });
  const c = clientFor(ws.apiKey);
  const otherC = clientFor(other.apiKey);
  let n = 0;
  const next = () => (n += 1);

  const f: Fixture = {
    t,
    dns,
    ws,
    c,
    other,
    otherC,
    bad: clientFor('lr_not_a_key'),
    clientFor,
    async account(client = c) {
      const r = await client.POST('/v2/account/connect', {
        body: {
          email: `sender${next()}@${MAIL_DOMAIN}`,
          provider: 'google',
          smtp: { password: 'app-password' },
          imap: { password: 'app-password' },
          dailyLimit: 50,
        },
      });
      return must('connect', r).data.account.id;
    },
    async campaign(client = c, body = {}) {
      const r = await client.POST('/v2/campaign/create', { body: { name: `Campaign ${next()}`, ...body } });
      return must('create campaign', r).data.campaign.id;
    },
    async step(client = c) {
      const campaignId = await f.campaign(client);
      const r = await client.POST('/v2/campaign/sequence-create', {
        body: {
          campaignId,
          steps: [
            {
              delayDays: 0,
              variants: [
                { subject: 'Hi {{firstName | there}}', body: 'A' },
                { subject: 'Hello {{firstName | there}}', body: 'B' },
              ],
            },
          ],
        },
      });
      const step = must('sequence-create', r).data.steps[0];
      return { campaignId, stepId: step.id, variantIds: step.variants.map((v) => v.id) };
    },
    async subsequence(client = c) {
      const r = await client.POST('/v2/subsequence/create', {
        body: {
          campaignId: await f.campaign(client),
          name: `Subsequence ${next()}`,
          trigger: { type: 'replyIntent', intent: 'question' },
          steps: [{ delayDays: 1, variants: [{ subject: '', body: 'Happy to answer.' }] }],
        },
      });
      return must('create subsequence', r).data.subsequence.id;
    },
    async ready(client = c) {
      const accountId = await f.account(client);
      const campaignId = await f.campaign(client, { schedule: SCHEDULE, accountIds: [accountId] });
      must(
        'sequence-create',
        await client.POST('/v2/campaign/sequence-create', {
          body: {
            campaignId,
            steps: [{ delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello {{firstName | there}}' }] }],
          },
        }),
      );
      return { campaignId, accountId };
    },
    async contact(client = c) {
      const campaignId = await f.campaign(client);
      const email = `lead${next()}@globex.io`;
      const r = await client.POST('/v1/contact/add', {
        body: { campaignId, contacts: [{ email, firstName: 'Max', customVariables: { plan: 'Growth' } }] },
      });
      return { campaignId, contactId: must('contact add', r).data.added[0].id, email };
    },
    async list(kind, client = c) {
      const path = kind === 'people' ? '/v2/list/create/people' : '/v2/list/create/company';
      const r = await client.POST(path, { body: { name: `List ${next()}` } });
      return must('create list', r).data.list.id;
    },
    async personIds(count) {
      return (await t.db('people').select('id').orderBy('id').limit(count)).map((r: { id: string }) => r.id);
    },
    async companyIds(count) {
      return (await t.db('companies').select('id').orderBy('id').limit(count)).map((r: { id: string }) => r.id);
    },
    async plan() {
      const r = await c.POST('/v2/whitelabel/add-plan', {
        body: { name: `Plan ${next()}`, limits: { perMin: 60, perHour: 1000, perDay: 10000 }, credits: 500 },
      });
      return must('add-plan', r).data.plan.id;
    },
    async subUser() {
      const email = `sub${next()}@brightwave.io`;
      const r = await c.POST('/v2/whitelabel/register', {
        body: { email, name: 'Maria Lopez', password: 'correct-horse-battery-staple' },
      });
      return { id: must('register', r).data.subUser.id, email };
    },
    async close() {
      await t.close();
      await dns.close();
    },
  };
  return f;
}
