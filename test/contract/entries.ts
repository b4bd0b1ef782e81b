/**
 * One entry per operation of the spec, keyed `METHOD /path` by its seed path: a call that succeeds
 * and calls that fail with a documented status, all through the typed client. An entry of a /v1
 * path runs under /v1 and again under its /v2 alias (`v` gives the version to call).
 */
import type { Fixture } from './fixture';
import { newId } from '../../server/platform/ids';
import type { DeliveryRow } from '../../server/modules/webhooks/store';
import { found } from '../helpers/rows';

export type Version = 'v1' | 'v2';
export interface Answer {
  response: Response;
  data?: unknown;
  error?: unknown;
}
export type Call = (f: Fixture, v: Version) => Promise<Answer>;
export interface Entry {
  ok: Call;
  errors: Record<number, Call>;
}

/** The same path under the version being tested, keeping the /v1 path's types. */
const at = <P extends string>(v: Version, path: P): P => (v === 'v1' ? path : (path.replace(/^\/v1\//, '/v2/') as P));

const MISSING = '0192f0c4-0000-7000-8000-000000000000';
/** Nothing listens there: deliveries and tests fail to connect, which the operations report. */
const HOOK_URL = 'http://127.0.0.1:9/hooks';

const trackingDomainName = () => `track${newId().slice(-8)}.acme-mail.io`;

/** A tracking domain of the main workspace (pending: the fixture's DNS has no record for it). */
async function trackingDomain(f: Fixture): Promise<string> {
  const res = await f.c.POST('/v2/tracking-domain/create', { body: { domain: trackingDomainName() } });
  return res.data!.data.trackingDomain.id;
}

async function hook(f: Fixture): Promise<string> {
  const res = await f.c.POST('/v2/webhook/create', { body: { url: HOOK_URL, eventTypes: ['email.sent'] } });
  return res.data!.data.subscription.id;
}

/**
 * A campaign email and the reply read from the mailbox (stored as the sending engine and the inbox reader
 * store them), from an account whose SMTP host is on loopback: an answer is refused by the outbound rule
 * without leaving the machine (status failed). `accountless` leaves the thread without an account.
 */
async function thread(
  f: Fixture,
  options: { accountless?: boolean } = {},
): Promise<{ outboundId: string; inboundId: string }> {
  const workspaceId = f.ws.workspaceId;
  const connected = await f.c.POST('/v2/account/connect', {
    body: {
      email: `inbox${newId().slice(-12)}@acme-mail.io`,
      provider: 'smtp',
      smtp: { host: '127.0.0.1', port: 2525, password: 'pw' },
    },
  });
  const account = connected.data!.data.account;
  const outboundId = newId();
  const inboundId = newId();
  const now = f.t.clock.now();
  const common = {
    workspace_id: workspaceId,
    account_id: options.accountless ? null : account.id,
    thread_id: outboundId,
    references: [],
    created_at: now,
  };
  await f.t.db('email_messages').insert([
    {
      ...common,
      id: outboundId,
      direction: 'outbound',
      kind: 'campaign',
      message_id: `<${outboundId}@acme-mail.io>`,
      from_address: account.email,
      to_address: 'tom@globex.com',
      subject: 'Quick question',
      text_body: 'Hi',
      status: 'sent',
      sent_at: now,
    },
    {
      ...common,
      id: inboundId,
      direction: 'inbound',
      kind: 'reply',
      message_id: `<${inboundId}@globex.com>`,
      in_reply_to: `<${outboundId}@acme-mail.io>`,
      from_address: 'tom@globex.com',
      to_address: account.email,
      subject: 'Re: Quick question',
      text_body: 'Sure',
      status: 'received',
      received_at: now,
    },
  ]);
  return { outboundId, inboundId };
}

/** A pool-only mailbox in the warm-up pool (never reached: no worker runs here), so a placement test has a recipient. */
async function poolMailbox(f: Fixture): Promise<void> {
  await f.t.services.warmup.addMailbox({
    email: `seed${newId().slice(-12)}@pool-mail.io`,
    password: 'pw',
    smtpHost: 'smtp.pool-mail.io',
    smtpPort: 587,
    imapHost: 'imap.pool-mail.io',
    imapPort: 993,
  });
}

/** A running placement test of the main workspace. */
async function placementTest(f: Fixture): Promise<string> {
  await poolMailbox(f);
  const res = await f.c.POST('/v2/placement/create', {
    body: { accountIds: [await f.account()], subject: 'Hi', text: 'Hello', recipientCount: 1 },
  });
  return res.data!.data.test.id;
}

/** A queued verification job of the main workspace. */
async function job(f: Fixture): Promise<string> {
  const res = await f.c.POST('/v2/job/verify', { body: { emails: ['jane.doe@acme.com'] } });
  return res.data!.data.job.id;
}

export const entries: Record<string, Entry> = {
  // Platform
  'GET /v1/ratelimit/limits': {
    ok: (f, v) => f.c.GET(at(v, '/v1/ratelimit/limits')),
    errors: { 401: (f, v) => f.bad.GET(at(v, '/v1/ratelimit/limits')) },
  },
  'GET /v1/authenticate': {
    ok: (f, v) => f.c.GET(at(v, '/v1/authenticate')),
    errors: { 401: (f, v) => f.bad.GET(at(v, '/v1/authenticate')) },
  },

  // Campaigns (v1)
  'GET /v1/campaign/list': {
    ok: async (f, v) => {
      await f.campaign();
      return f.c.GET(at(v, '/v1/campaign/list'), { params: { query: { limit: 5, skip: 0 } } });
    },
    errors: {
      400: (f, v) => f.c.GET(at(v, '/v1/campaign/list'), { params: { query: { limit: 0 } } }),
      401: (f, v) => f.bad.GET(at(v, '/v1/campaign/list')),
    },
  },
  'GET /v1/campaign/get/name': {
    ok: async (f, v) =>
      f.c.GET(at(v, '/v1/campaign/get/name'), { params: { query: { campaignId: await f.campaign() } } }),
    errors: {
      404: async (f, v) =>
        f.c.GET(at(v, '/v1/campaign/get/name'), { params: { query: { campaignId: await f.campaign(f.otherC) } } }),
    },
  },
  'GET /v1/campaign/get/status': {
    ok: async (f, v) =>
      f.c.GET(at(v, '/v1/campaign/get/status'), { params: { query: { campaignId: await f.campaign() } } }),
    errors: {
      400: (f, v) => f.c.GET(at(v, '/v1/campaign/get/status'), { params: { query: { campaignId: 'not-a-uuid' } } }),
      404: (f, v) => f.c.GET(at(v, '/v1/campaign/get/status'), { params: { query: { campaignId: MISSING } } }),
    },
  },
  'GET /v1/campaign/get/accounts': {
    ok: async (f, v) => {
      const { campaignId } = await f.ready();
      return f.c.GET(at(v, '/v1/campaign/get/accounts'), { params: { query: { campaignId } } });
    },
    errors: {
      404: (f, v) => f.c.GET(at(v, '/v1/campaign/get/accounts'), { params: { query: { campaignId: MISSING } } }),
    },
  },
  'POST /v1/campaign/set/name': {
    ok: async (f, v) =>
      f.c.POST(at(v, '/v1/campaign/set/name'), { body: { campaignId: await f.campaign(), name: 'Renamed campaign' } }),
    errors: {
      400: async (f, v) =>
        f.c.POST(at(v, '/v1/campaign/set/name'), { body: { campaignId: await f.campaign(), name: '' } }),
      404: async (f, v) =>
        f.c.POST(at(v, '/v1/campaign/set/name'), {
          body: { campaignId: await f.campaign(f.otherC), name: 'Mine now' },
        }),
    },
  },
  'POST /v1/campaign/set/accounts': {
    ok: async (f, v) =>
      f.c.POST(at(v, '/v1/campaign/set/accounts'), {
        body: { campaignId: await f.campaign(), accountIds: [await f.account(), await f.account()] },
      }),
    errors: {
      404: async (f, v) =>
        f.c.POST(at(v, '/v1/campaign/set/accounts'), {
          body: { campaignId: await f.campaign(), accountIds: [await f.account(f.otherC)] },
        }),
    },
  },
  'POST /v1/campaign/add/account': {
    ok: async (f, v) =>
      f.c.POST(at(v, '/v1/campaign/add/account'), {
        body: { campaignId: await f.campaign(), accountId: await f.account() },
      }),
    errors: {
      404: async (f, v) =>
        f.c.POST(at(v, '/v1/campaign/add/account'), { body: { campaignId: MISSING, accountId: await f.account() } }),
    },
  },
  'POST /v1/campaign/remove/accounts': {
    ok: async (f, v) => {
      const accountId = await f.account();
      const campaignId = await f.campaign(f.c, { accountIds: [accountId, await f.account()] });
      return f.c.POST(at(v, '/v1/campaign/remove/accounts'), { body: { campaignId, accountIds: [accountId] } });
    },
    errors: {
      404: (f, v) =>
        f.c.POST(at(v, '/v1/campaign/remove/accounts'), { body: { campaignId: MISSING, accountIds: [MISSING] } }),
      409: async (f, v) => {
        // An active campaign keeps at least one account.
        const { campaignId, accountId } = await f.ready();
        await f.c.POST('/v2/campaign/launch', { body: { campaignId } });
        return f.c.POST(at(v, '/v1/campaign/remove/accounts'), { body: { campaignId, accountIds: [accountId] } });
      },
    },
  },

  // Email accounts
  'GET /v1/account/list': {
    ok: async (f, v) => {
      await f.account();
      return f.c.GET(at(v, '/v1/account/list'), { params: { query: { limit: 10 } } });
    },
    errors: { 400: (f, v) => f.c.GET(at(v, '/v1/account/list'), { params: { query: { limit: 101 } } }) },
  },
  'GET /v1/account/status': {
    ok: async (f, v) => f.c.GET(at(v, '/v1/account/status'), { params: { query: { accountId: await f.account() } } }),
    errors: {
      404: async (f, v) =>
        f.c.GET(at(v, '/v1/account/status'), { params: { query: { accountId: await f.account(f.otherC) } } }),
    },
  },
  'POST /v1/account/vitals': {
    ok: async (f, v) => f.c.POST(at(v, '/v1/account/vitals'), { body: { accountIds: [await f.account()] } }),
    errors: {
      400: (f, v) => f.c.POST(at(v, '/v1/account/vitals'), { body: { accountIds: [] } }),
      404: (f, v) => f.c.POST(at(v, '/v1/account/vitals'), { body: { accountIds: [MISSING] } }),
    },
  },
  'POST /v1/account/warmup/enable': {
    ok: async (f, v) => f.c.POST(at(v, '/v1/account/warmup/enable'), { body: { accountId: await f.account() } }),
    errors: { 404: (f, v) => f.c.POST(at(v, '/v1/account/warmup/enable'), { body: { accountId: MISSING } }) },
  },
  'POST /v1/account/warmup/pause': {
    ok: async (f, v) => {
      const accountId = await f.account();
      await f.c.POST('/v1/account/warmup/enable', { body: { accountId } });
      return f.c.POST(at(v, '/v1/account/warmup/pause'), { body: { accountId } });
    },
    errors: {
      404: async (f, v) =>
        f.c.POST(at(v, '/v1/account/warmup/pause'), { body: { accountId: await f.account(f.otherC) } }),
    },
  },
  'DELETE /v1/account/delete': {
    ok: async (f, v) =>
      f.c.DELETE(at(v, '/v1/account/delete'), { params: { query: { accountId: await f.account() } } }),
    errors: {
      400: (f, v) => f.c.DELETE(at(v, '/v1/account/delete'), { params: { query: { accountId: 'x' } } }),
      404: (f, v) => f.c.DELETE(at(v, '/v1/account/delete'), { params: { query: { accountId: MISSING } } }),
    },
  },
  'POST /v2/account/connect': {
    ok: (f) =>
      f.c.POST('/v2/account/connect', {
        body: {
          email: 'connect.ok@acme-mail.io',
          provider: 'smtp',
          smtp: { host: 'mail.acme-mail.io', port: 587, password: 'pw' },
          dailyLimit: 30,
        },
      }),
    errors: {
      400: (f) =>
        f.c.POST('/v2/account/connect', {
          body: { email: 'not-an-email', provider: 'google', smtp: { password: 'pw' }, dailyLimit: 30 },
        }),
      409: async (f) => {
        const body = {
          email: 'twice@acme-mail.io',
          provider: 'google' as const,
          smtp: { password: 'pw' },
          dailyLimit: 30,
        };
        await f.c.POST('/v2/account/connect', { body });
        return f.c.POST('/v2/account/connect', { body });
      },
    },
  },

  'POST /v2/account/oauth/start': {
    ok: (f) => f.c.POST('/v2/account/oauth/start', { body: { provider: 'generic', loginHint: 'oauth@acme-mail.io' } }),
    errors: {
      400: (f) => f.c.POST('/v2/account/oauth/start', { body: { provider: 'generic', loginHint: 'not-an-email' } }),
      404: (f) => f.c.POST('/v2/account/oauth/start', { body: { provider: 'generic', accountId: MISSING } }),
      409: (f) => f.c.POST('/v2/account/oauth/start', { body: { provider: 'google' } }),
    },
  },
  'GET /v2/account/oauth/session': {
    ok: async (f) => {
      const started = await f.c.POST('/v2/account/oauth/start', { body: { provider: 'generic' } });
      return f.c.GET('/v2/account/oauth/session', {
        params: { query: { sessionId: started.data!.data.sessionId } },
      });
    },
    errors: {
      400: (f) => f.c.GET('/v2/account/oauth/session', { params: { query: { sessionId: 'x' } } }),
      404: (f) => f.c.GET('/v2/account/oauth/session', { params: { query: { sessionId: MISSING } } }),
    },
  },

  // Analytics
  'GET /v1/analytics/campaign/summary': {
    ok: async (f, v) =>
      f.c.GET(at(v, '/v1/analytics/campaign/summary'), {
        params: { query: { campaignId: await f.campaign(), startDate: '2026-11-01', endDate: '2026-11-23' } },
      }),
    errors: {
      400: (f, v) =>
        f.c.GET(at(v, '/v1/analytics/campaign/summary'), {
          params: { query: { startDate: '2026-11-23', endDate: '2026-11-01' } },
        }),
      404: (f, v) => f.c.GET(at(v, '/v1/analytics/campaign/summary'), { params: { query: { campaignId: MISSING } } }),
    },
  },
  'GET /v2/analytics/campaign/steps': {
    ok: async (f) => {
      const { campaignId } = await f.step();
      return f.c.GET('/v2/analytics/campaign/steps', {
        params: { query: { campaignId, startDate: '2026-11-01', endDate: '2026-11-23' } },
      });
    },
    errors: {
      400: (f) => f.c.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId: 'nope' } } }),
      404: async (f) =>
        f.c.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId: await f.campaign(f.otherC) } } }),
    },
  },
  'GET /v1/analytics/campaign/count': {
    ok: async (f, v) =>
      f.c.GET(at(v, '/v1/analytics/campaign/count'), { params: { query: { campaignId: await f.campaign() } } }),
    errors: {
      404: async (f, v) =>
        f.c.GET(at(v, '/v1/analytics/campaign/count'), {
          params: { query: { campaignId: await f.campaign(f.otherC) } },
        }),
    },
  },
  'GET /v1/analytics/account/warmup/summary': {
    ok: async (f, v) =>
      f.c.GET(at(v, '/v1/analytics/account/warmup/summary'), { params: { query: { accountId: await f.account() } } }),
    errors: {
      404: (f, v) =>
        f.c.GET(at(v, '/v1/analytics/account/warmup/summary'), { params: { query: { accountId: MISSING } } }),
    },
  },
  'GET /v1/analytics/account/campaign/count': {
    ok: async (f, v) =>
      f.c.GET(at(v, '/v1/analytics/account/campaign/count'), { params: { query: { accountId: await f.account() } } }),
    errors: {
      404: (f, v) =>
        f.c.GET(at(v, '/v1/analytics/account/campaign/count'), { params: { query: { accountId: MISSING } } }),
    },
  },

  // Contacts
  'POST /v1/contact/add': {
    ok: async (f, v) =>
      f.c.POST(at(v, '/v1/contact/add'), {
        body: {
          campaignId: await f.campaign(),
          contacts: [{ email: 'jane.doe@acme.com', firstName: 'Jane', customVariables: { seats: 12 } }],
        },
      }),
    errors: {
      400: async (f, v) =>
        f.c.POST(at(v, '/v1/contact/add'), { body: { campaignId: await f.campaign(), contacts: [] } }),
      404: (f, v) =>
        f.c.POST(at(v, '/v1/contact/add'), { body: { campaignId: MISSING, contacts: [{ email: 'a@acme.com' }] } }),
    },
  },
  'GET /v1/contact/get': {
    ok: async (f, v) =>
      f.c.GET(at(v, '/v1/contact/get'), { params: { query: { contactId: (await f.contact()).contactId } } }),
    errors: {
      404: async (f, v) =>
        f.c.GET(at(v, '/v1/contact/get'), { params: { query: { contactId: (await f.contact(f.otherC)).contactId } } }),
    },
  },
  'POST /v1/contact/delete': {
    ok: async (f, v) => f.c.POST(at(v, '/v1/contact/delete'), { body: { contactId: (await f.contact()).contactId } }),
    errors: { 404: (f, v) => f.c.POST(at(v, '/v1/contact/delete'), { body: { contactId: MISSING } }) },
  },
  'POST /v2/contact/pause': {
    ok: async (f) => f.c.POST('/v2/contact/pause', { body: { contactIds: [(await f.contact()).contactId] } }),
    errors: {
      400: (f) => f.c.POST('/v2/contact/pause', { body: {} }),
      404: (f) => f.c.POST('/v2/contact/pause', { body: { contactIds: [MISSING] } }),
      409: async (f) => {
        const { contactId, email } = await f.contact();
        await f.t.db('contacts').where({ id: contactId }).update({ status: 'bounced' });
        return f.c.POST('/v2/contact/pause', { body: { emails: [email] } });
      },
    },
  },
  'POST /v2/contact/resume': {
    ok: async (f) => {
      const { contactId } = await f.contact();
      await f.c.POST('/v2/contact/pause', { body: { contactIds: [contactId] } });
      return f.c.POST('/v2/contact/resume', { body: { contactIds: [contactId] } });
    },
    errors: {
      400: (f) => f.c.POST('/v2/contact/resume', { body: { contactIds: [MISSING], emails: ['a@b.io'] } }),
      404: (f) => f.c.POST('/v2/contact/resume', { body: { emails: ['nobody@globex.io'] } }),
      409: async (f) => {
        const { contactId } = await f.contact();
        await f.t.db('contacts').where({ id: contactId }).update({ status: 'unsubscribed' });
        return f.c.POST('/v2/contact/resume', { body: { contactIds: [contactId] } });
      },
    },
  },
  'POST /v2/contact/move': {
    ok: async (f) =>
      f.c.POST('/v2/contact/move', {
        body: { contactIds: [(await f.contact()).contactId], toCampaignId: await f.campaign(), keepProgress: true },
      }),
    errors: {
      400: (f) => f.c.POST('/v2/contact/move', { body: { contactIds: [], toCampaignId: MISSING } }),
      404: async (f) =>
        f.c.POST('/v2/contact/move', { body: { contactIds: [(await f.contact()).contactId], toCampaignId: MISSING } }),
    },
  },
  'GET /v2/contact/list': {
    ok: async (f) => {
      const { campaignId } = await f.contact();
      return f.c.GET('/v2/contact/list', { params: { query: { campaignId, search: 'globex', limit: 5 } } });
    },
    errors: {
      400: (f) => f.c.GET('/v2/contact/list', { params: { query: { cursor: 'bm90LWEtY3Vyc29y' } } }),
      404: (f) => f.c.GET('/v2/contact/list', { params: { query: { campaignId: MISSING } } }),
    },
  },
  'POST /v2/contact/bulk': {
    ok: async (f) => {
      const { campaignId } = await f.contact();
      return f.c.POST('/v2/contact/bulk', { body: { filter: { campaignId }, action: 'pause' } });
    },
    errors: {
      400: (f) => f.c.POST('/v2/contact/bulk', { body: { filter: {}, action: 'move' } }),
      404: (f) => f.c.POST('/v2/contact/bulk', { body: { filter: { campaignId: MISSING }, action: 'pause' } }),
    },
  },
  'POST /v1/contact/update/status': {
    ok: async (f, v) =>
      f.c.POST(at(v, '/v1/contact/update/status'), {
        body: { contactId: (await f.contact()).contactId, leadStatus: 'interested' },
      }),
    errors: {
      400: async (f, v) =>
        f.c.POST(at(v, '/v1/contact/update/status'), {
          body: { contactId: (await f.contact()).contactId, leadStatus: 'excited' as never },
        }),
      404: (f, v) => f.c.POST(at(v, '/v1/contact/update/status'), { body: { contactId: MISSING, leadStatus: 'lost' } }),
    },
  },
  'POST /v1/contact/data/update': {
    ok: async (f, v) =>
      f.c.POST(at(v, '/v1/contact/data/update'), {
        body: { contactId: (await f.contact()).contactId, customVariables: { seats: 20, trialUser: true } },
      }),
    errors: {
      404: (f, v) =>
        f.c.POST(at(v, '/v1/contact/data/update'), { body: { contactId: MISSING, customVariables: { seats: 1 } } }),
    },
  },
  'POST /v1/contact/data/set': {
    ok: async (f, v) => {
      const { campaignId, email } = await f.contact();
      return f.c.POST(at(v, '/v1/contact/data/set'), {
        body: { campaignId, email, customVariables: { plan: 'Enterprise' } },
      });
    },
    errors: {
      404: async (f, v) =>
        f.c.POST(at(v, '/v1/contact/data/set'), {
          body: { campaignId: await f.campaign(), email: 'nobody@globex.io', customVariables: { plan: 'x' } },
        }),
    },
  },
  'POST /v1/contact/data/remove': {
    ok: async (f, v) =>
      f.c.POST(at(v, '/v1/contact/data/remove'), {
        body: { contactId: (await f.contact()).contactId, keys: ['plan'] },
      }),
    errors: {
      404: (f, v) => f.c.POST(at(v, '/v1/contact/data/remove'), { body: { contactId: MISSING, keys: ['plan'] } }),
    },
  },

  // Lead database
  'POST /v1/mixed_people/search': {
    ok: (f, v) =>
      f.c.POST(at(v, '/v1/mixed_people/search'), { body: { page: 1, perPage: 3, dataOptions: ['workEmailReveal'] } }),
    errors: {
      400: (f, v) =>
        f.c.POST(at(v, '/v1/mixed_people/search'), {
          body: { page: 1, perPage: 3, dataOptions: ['everything' as never] },
        }),
      402: async (f, v) => {
        const poor = await f.t.createWorkspace({ credits: 0 });
        return f.clientFor(poor.apiKey).POST(at(v, '/v1/mixed_people/search'), {
          body: { page: 1, perPage: 5, dataOptions: ['mobilePhoneReveal'] },
        });
      },
    },
  },
  'POST /v1/company/find': {
    ok: (f, v) => f.c.POST(at(v, '/v1/company/find'), { body: { dataOptions: ['basic'], page: 1, perPage: 3 } }),
    errors: {
      400: (f, v) =>
        f.c.POST(at(v, '/v1/company/find'), { body: { dataOptions: ['basic', 'full'], page: 1, perPage: 3 } }),
      402: async (f, v) => {
        const poor = await f.t.createWorkspace({ credits: 0 });
        return f
          .clientFor(poor.apiKey)
          .POST(at(v, '/v1/company/find'), { body: { dataOptions: ['full'], page: 1, perPage: 5 } });
      },
    },
  },
  'POST /v1/people_verification/verify': {
    ok: (f, v) =>
      f.c.POST(at(v, '/v1/people_verification/verify'), {
        body: { emails: ['jane@acme-mail.io', 'temp123@mailinator.com'] },
      }),
    errors: { 400: (f, v) => f.c.POST(at(v, '/v1/people_verification/verify'), { body: { emails: [] } }) },
  },
  'POST /v1/people_enrichment/peopleEnrichment': {
    ok: (f, v) =>
      f.c.POST(at(v, '/v1/people_enrichment/peopleEnrichment'), {
        body: {
          people: [{ firstName: 'Nobody', lastName: 'Known', companyName: 'Nowhere Inc.' }],
          dataOptions: ['workEmailReveal'],
        },
      }),
    errors: {
      400: (f, v) => f.c.POST(at(v, '/v1/people_enrichment/peopleEnrichment'), { body: { people: [] } }),
      402: async (f, v) => {
        const poor = await f.t.createWorkspace({ credits: 0 });
        const [email] = (await f.t.db('people').whereNotNull('work_email').select('work_email').limit(1)).map(
          (r: { work_email: string }) => r.work_email,
        );
        return f.clientFor(poor.apiKey).POST(at(v, '/v1/people_enrichment/peopleEnrichment'), {
          body: { people: [{ email }], dataOptions: ['workEmailReveal', 'mobilePhoneReveal'] },
        });
      },
    },
  },
  'POST /v2/enrich/by-details': {
    ok: (f) =>
      f.c.POST('/v2/enrich/by-details', {
        body: { people: [{ firstName: 'Nobody', lastName: 'Known', companyName: 'Nowhere Inc.' }] },
      }),
    errors: { 400: (f) => f.c.POST('/v2/enrich/by-details', { body: { people: [{}] } }) },
  },

  // Campaigns (v2)
  'POST /v2/campaign/create': {
    ok: (f) => f.c.POST('/v2/campaign/create', { body: { name: 'Q4 SaaS founders', schedule: SCHEDULE_FOR_CREATE } }),
    errors: {
      400: (f) => f.c.POST('/v2/campaign/create', { body: { name: '' } }),
      404: (f) => f.c.POST('/v2/campaign/create', { body: { name: 'With a stranger account', accountIds: [MISSING] } }),
    },
  },
  'GET /v2/campaign/get': {
    ok: async (f) => f.c.GET('/v2/campaign/get', { params: { query: { campaignId: (await f.step()).campaignId } } }),
    errors: {
      400: (f) => f.c.GET('/v2/campaign/get', { params: { query: { campaignId: 'nope' } } }),
      404: async (f) => f.c.GET('/v2/campaign/get', { params: { query: { campaignId: await f.campaign(f.otherC) } } }),
    },
  },
  'POST /v2/campaign/duplicate': {
    ok: async (f) => f.c.POST('/v2/campaign/duplicate', { body: { campaignId: (await f.step()).campaignId } }),
    errors: {
      400: async (f) => f.c.POST('/v2/campaign/duplicate', { body: { campaignId: await f.campaign(), name: ' ' } }),
      404: (f) => f.c.POST('/v2/campaign/duplicate', { body: { campaignId: MISSING } }),
    },
  },
  'POST /v2/campaign/delete': {
    ok: async (f) => f.c.POST('/v2/campaign/delete', { body: { campaignId: await f.campaign() } }),
    errors: {
      400: (f) => f.c.POST('/v2/campaign/delete', { body: { campaignId: 'nope' } }),
      404: async (f) => f.c.POST('/v2/campaign/delete', { body: { campaignId: await f.campaign(f.otherC) } }),
    },
  },
  'POST /v2/campaign/sequence-create': {
    ok: async (f) =>
      f.c.POST('/v2/campaign/sequence-create', {
        body: {
          campaignId: await f.campaign(),
          steps: [{ delayDays: 0, variants: [{ subject: 'Hi {{firstName | there}}', body: 'Hello' }] }],
        },
      }),
    errors: {
      404: (f) =>
        f.c.POST('/v2/campaign/sequence-create', {
          body: { campaignId: MISSING, steps: [{ delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] }] },
        }),
    },
  },
  'POST /v2/campaign/variants-create': {
    ok: async (f) =>
      f.c.POST('/v2/campaign/variants-create', {
        body: { stepId: (await f.step()).stepId, variants: [{ subject: 'Third try', body: 'C' }] },
      }),
    errors: {
      404: (f) =>
        f.c.POST('/v2/campaign/variants-create', {
          body: { stepId: MISSING, variants: [{ subject: 'x', body: 'y' }] },
        }),
    },
  },
  'PUT /v2/campaign/sequences/{id}': {
    ok: async (f) => {
      const { stepId } = await f.step();
      return f.c.PUT('/v2/campaign/sequences/{id}', { params: { path: { id: stepId } }, body: { delayDays: 0 } });
    },
    errors: {
      404: (f) => f.c.PUT('/v2/campaign/sequences/{id}', { params: { path: { id: MISSING } }, body: { delayDays: 2 } }),
    },
  },
  'DELETE /v2/campaign/sequences-delete': {
    ok: async (f) =>
      f.c.DELETE('/v2/campaign/sequences-delete', { params: { query: { stepId: (await f.step()).stepId } } }),
    errors: { 404: (f) => f.c.DELETE('/v2/campaign/sequences-delete', { params: { query: { stepId: MISSING } } }) },
  },
  'DELETE /v2/campaign/variants-delete': {
    ok: async (f) =>
      f.c.DELETE('/v2/campaign/variants-delete', { params: { query: { variantId: (await f.step()).variantIds[1] } } }),
    errors: { 404: (f) => f.c.DELETE('/v2/campaign/variants-delete', { params: { query: { variantId: MISSING } } }) },
  },
  'POST /v2/campaign/set/schedules': {
    ok: async (f) =>
      f.c.POST('/v2/campaign/set/schedules', {
        body: {
          campaignId: await f.campaign(),
          schedule: SCHEDULE_FOR_CREATE,
          options: { dailyLimit: 100, stopOnReply: true },
        },
      }),
    errors: {
      400: async (f) =>
        f.c.POST('/v2/campaign/set/schedules', {
          body: { campaignId: await f.campaign(), schedule: { ...SCHEDULE_FOR_CREATE, days: [9] } },
        }),
      404: (f) =>
        f.c.POST('/v2/campaign/set/schedules', { body: { campaignId: MISSING, schedule: SCHEDULE_FOR_CREATE } }),
    },
  },
  'POST /v2/campaign/launch': {
    ok: async (f) => f.c.POST('/v2/campaign/launch', { body: { campaignId: (await f.ready()).campaignId } }),
    errors: {
      404: (f) => f.c.POST('/v2/campaign/launch', { body: { campaignId: MISSING } }),
      409: async (f) => f.c.POST('/v2/campaign/launch', { body: { campaignId: await f.campaign() } }),
    },
  },
  'POST /v2/campaign/pause': {
    ok: async (f) => {
      const { campaignId } = await f.ready();
      await f.c.POST('/v2/campaign/launch', { body: { campaignId } });
      return f.c.POST('/v2/campaign/pause', { body: { campaignId } });
    },
    errors: {
      404: (f) => f.c.POST('/v2/campaign/pause', { body: { campaignId: MISSING } }),
      409: async (f) => f.c.POST('/v2/campaign/pause', { body: { campaignId: await f.campaign() } }),
    },
  },

  // Subsequences
  'POST /v2/subsequence/create': {
    ok: async (f) =>
      f.c.POST('/v2/subsequence/create', {
        body: {
          campaignId: await f.campaign(),
          name: 'Asked a question',
          trigger: { type: 'replyIntent', intent: 'question' },
          steps: [{ delay: { value: 2, unit: 'hours' }, variants: [{ subject: '', body: 'Happy to answer.' }] }],
        },
      }),
    errors: {
      400: async (f) =>
        f.c.POST('/v2/subsequence/create', {
          body: {
            campaignId: await f.campaign(),
            name: 'Clicked',
            trigger: { type: 'clicked', stepId: MISSING },
            steps: [{ delayDays: 1, variants: [{ subject: 'Hi', body: 'Hello' }] }],
          },
        }),
      404: (f) =>
        f.c.POST('/v2/subsequence/create', {
          body: {
            campaignId: MISSING,
            name: 'No campaign',
            trigger: { type: 'noReply' },
            steps: [{ delayDays: 1, variants: [{ subject: 'Hi', body: 'Hello' }] }],
          },
        }),
    },
  },
  'GET /v2/subsequence/list': {
    ok: async (f) => f.c.GET('/v2/subsequence/list', { params: { query: { campaignId: await f.campaign() } } }),
    errors: { 404: (f) => f.c.GET('/v2/subsequence/list', { params: { query: { campaignId: MISSING } } }) },
  },
  'GET /v2/subsequence/get': {
    ok: async (f) => f.c.GET('/v2/subsequence/get', { params: { query: { subsequenceId: await f.subsequence() } } }),
    errors: { 404: (f) => f.c.GET('/v2/subsequence/get', { params: { query: { subsequenceId: MISSING } } }) },
  },
  'POST /v2/subsequence/update': {
    ok: async (f) =>
      f.c.POST('/v2/subsequence/update', { body: { subsequenceId: await f.subsequence(), name: 'Renamed' } }),
    errors: {
      400: async (f) =>
        f.c.POST('/v2/subsequence/update', {
          body: { subsequenceId: await f.subsequence(), trigger: { type: 'replyContains' } },
        }),
      404: (f) => f.c.POST('/v2/subsequence/update', { body: { subsequenceId: MISSING, name: 'x' } }),
    },
  },
  'DELETE /v2/subsequence/delete': {
    ok: async (f) =>
      f.c.DELETE('/v2/subsequence/delete', { params: { query: { subsequenceId: await f.subsequence() } } }),
    errors: { 404: (f) => f.c.DELETE('/v2/subsequence/delete', { params: { query: { subsequenceId: MISSING } } }) },
  },
  'POST /v2/subsequence/pause': {
    ok: async (f) => f.c.POST('/v2/subsequence/pause', { body: { subsequenceId: await f.subsequence() } }),
    errors: {
      404: (f) => f.c.POST('/v2/subsequence/pause', { body: { subsequenceId: MISSING } }),
    },
  },
  'POST /v2/subsequence/resume': {
    ok: async (f) => {
      const subsequenceId = await f.subsequence();
      await f.c.POST('/v2/subsequence/pause', { body: { subsequenceId } });
      return f.c.POST('/v2/subsequence/resume', { body: { subsequenceId } });
    },
    errors: {
      404: (f) => f.c.POST('/v2/subsequence/resume', { body: { subsequenceId: MISSING } }),
      409: async (f) => f.c.POST('/v2/subsequence/resume', { body: { subsequenceId: await f.subsequence() } }),
    },
  },

  // Lists
  'POST /v2/list/create/people': {
    ok: (f) => f.c.POST('/v2/list/create/people', { body: { name: 'Austin SaaS VPs of Sales' } }),
    errors: {
      400: (f) => f.c.POST('/v2/list/create/people', { body: { name: '' } }),
      409: async (f) => {
        await f.c.POST('/v2/list/create/people', { body: { name: 'Twice people' } });
        return f.c.POST('/v2/list/create/people', { body: { name: 'Twice people' } });
      },
    },
  },
  'POST /v2/list/create/company': {
    ok: (f) => f.c.POST('/v2/list/create/company', { body: { name: 'Fintech targets Q1' } }),
    errors: {
      409: async (f) => {
        await f.c.POST('/v2/list/create/company', { body: { name: 'Twice companies' } });
        return f.c.POST('/v2/list/create/company', { body: { name: 'Twice companies' } });
      },
    },
  },
  'POST /v2/list/delete/people': {
    ok: async (f) => f.c.POST('/v2/list/delete/people', { body: { listId: await f.list('people') } }),
    errors: {
      404: async (f) => f.c.POST('/v2/list/delete/people', { body: { listId: await f.list('people', f.otherC) } }),
      409: async (f) => f.c.POST('/v2/list/delete/people', { body: { listId: await f.list('company') } }),
    },
  },
  'POST /v2/list/delete/company': {
    ok: async (f) => f.c.POST('/v2/list/delete/company', { body: { listId: await f.list('company') } }),
    errors: { 404: (f) => f.c.POST('/v2/list/delete/company', { body: { listId: MISSING } }) },
  },
  'GET /v2/list/get': {
    ok: async (f) => f.c.GET('/v2/list/get', { params: { query: { listId: await f.list('people') } } }),
    errors: { 404: (f) => f.c.GET('/v2/list/get', { params: { query: { listId: MISSING } } }) },
  },
  'GET /v2/list/all': {
    ok: async (f) => {
      await f.list('company');
      return f.c.GET('/v2/list/all', { params: { query: { limit: 5, kind: 'company' } } });
    },
    errors: { 400: (f) => f.c.GET('/v2/list/all', { params: { query: { skip: -1 } } }) },
  },
  'GET /v2/list/leads': {
    ok: async (f) => {
      const listId = await f.list('people');
      await f.c.POST('/v2/list/add/leads', { body: { listId, personIds: await f.personIds(2) } });
      return f.c.GET('/v2/list/leads', { params: { query: { listId } } });
    },
    errors: {
      404: (f) => f.c.GET('/v2/list/leads', { params: { query: { listId: MISSING } } }),
      409: async (f) => f.c.GET('/v2/list/leads', { params: { query: { listId: await f.list('company') } } }),
    },
  },
  'GET /v2/list/companies': {
    ok: async (f) => {
      const listId = await f.list('company');
      await f.c.POST('/v2/list/add/companies', { body: { listId, companyIds: await f.companyIds(2) } });
      return f.c.GET('/v2/list/companies', { params: { query: { listId } } });
    },
    errors: {
      409: async (f) => f.c.GET('/v2/list/companies', { params: { query: { listId: await f.list('people') } } }),
    },
  },
  'POST /v2/list/add/leads': {
    ok: async (f) =>
      f.c.POST('/v2/list/add/leads', {
        body: { listId: await f.list('people'), personIds: [...(await f.personIds(2)), MISSING] },
      }),
    errors: {
      404: async (f) => f.c.POST('/v2/list/add/leads', { body: { listId: MISSING, personIds: await f.personIds(1) } }),
    },
  },
  'POST /v2/list/add/companies': {
    ok: async (f) =>
      f.c.POST('/v2/list/add/companies', {
        body: { listId: await f.list('company'), companyIds: await f.companyIds(2) },
      }),
    errors: {
      409: async (f) =>
        f.c.POST('/v2/list/add/companies', {
          body: { listId: await f.list('people'), companyIds: await f.companyIds(1) },
        }),
    },
  },
  'POST /v2/list/remove/leads': {
    ok: async (f) => {
      const listId = await f.list('people');
      const personIds = await f.personIds(2);
      await f.c.POST('/v2/list/add/leads', { body: { listId, personIds } });
      return f.c.POST('/v2/list/remove/leads', { body: { listId, personIds } });
    },
    errors: {
      404: async (f) =>
        f.c.POST('/v2/list/remove/leads', { body: { listId: MISSING, personIds: await f.personIds(1) } }),
    },
  },
  'POST /v2/list/remove/companies': {
    ok: async (f) => {
      const listId = await f.list('company');
      const companyIds = await f.companyIds(2);
      await f.c.POST('/v2/list/add/companies', { body: { listId, companyIds } });
      return f.c.POST('/v2/list/remove/companies', { body: { listId, companyIds: [companyIds[0]] } });
    },
    errors: { 400: (f) => f.c.POST('/v2/list/remove/companies', { body: { listId: MISSING, companyIds: [] } }) },
  },
  'POST /v2/list/send-to-campaign': {
    ok: async (f) => {
      const listId = await f.list('people');
      await f.c.POST('/v2/list/add/leads', { body: { listId, personIds: await f.personIds(3) } });
      return f.c.POST('/v2/list/send-to-campaign', { body: { listId, campaignId: await f.campaign() } });
    },
    errors: {
      404: async (f) =>
        f.c.POST('/v2/list/send-to-campaign', { body: { listId: await f.list('people'), campaignId: MISSING } }),
      409: async (f) =>
        f.c.POST('/v2/list/send-to-campaign', {
          body: { listId: await f.list('company'), campaignId: await f.campaign() },
        }),
    },
  },
  'GET /v2/list/export': {
    ok: async (f) => {
      const listId = await f.list('people');
      await f.c.POST('/v2/list/add/leads', { body: { listId, personIds: await f.personIds(2) } });
      return f.c.GET('/v2/list/export', { params: { query: { listId, format: 'json' } } });
    },
    errors: { 404: (f) => f.c.GET('/v2/list/export', { params: { query: { listId: MISSING } } }) },
  },

  // Whitelabel
  'POST /v2/whitelabel/register': {
    ok: (f) =>
      f.c.POST('/v2/whitelabel/register', {
        body: { email: 'maria.lopez@brightwave.io', name: 'Maria Lopez', password: 'correct-horse-battery-staple' },
      }),
    errors: {
      403: async (f) => {
        const plain = await f.t.createWorkspace();
        return f
          .clientFor(plain.apiKey)
          .POST('/v2/whitelabel/register', { body: { email: 'x@brightwave.io', name: 'X' } });
      },
      409: async (f) => {
        const { email } = await f.subUser();
        return f.c.POST('/v2/whitelabel/register', { body: { email, name: 'Again' } });
      },
    },
  },
  'POST /v2/whitelabel/add-plan': {
    ok: (f) =>
      f.c.POST('/v2/whitelabel/add-plan', {
        body: { name: 'Agency Pro', limits: { perMin: 60, perHour: 1000, perDay: 10000, perSecond: 5 }, credits: 5000 },
      }),
    errors: {
      400: (f) =>
        f.c.POST('/v2/whitelabel/add-plan', {
          body: { name: 'Too small', limits: { perMin: 1, perHour: 50, perDay: 100 }, credits: 0 },
        }),
    },
  },
  'POST /v2/whitelabel/user/{subUserId}/assign-plan/{planId}': {
    ok: async (f) =>
      f.c.POST('/v2/whitelabel/user/{subUserId}/assign-plan/{planId}', {
        params: { path: { subUserId: (await f.subUser()).id, planId: await f.plan() } },
      }),
    errors: {
      404: async (f) =>
        f.c.POST('/v2/whitelabel/user/{subUserId}/assign-plan/{planId}', {
          params: { path: { subUserId: MISSING, planId: await f.plan() } },
        }),
    },
  },
  'GET /v2/whitelabel/get-plan': {
    ok: async (f) => f.c.GET('/v2/whitelabel/get-plan', { params: { query: { planId: await f.plan() } } }),
    errors: { 404: (f) => f.c.GET('/v2/whitelabel/get-plan', { params: { query: { planId: MISSING } } }) },
  },
  'GET /v2/whitelabel/user/{email}': {
    ok: async (f) => f.c.GET('/v2/whitelabel/user/{email}', { params: { path: { email: (await f.subUser()).email } } }),
    errors: {
      404: (f) => f.c.GET('/v2/whitelabel/user/{email}', { params: { path: { email: 'nobody@brightwave.io' } } }),
    },
  },

  // Webhooks
  'POST /v2/webhook/create': {
    ok: (f) => f.c.POST('/v2/webhook/create', { body: { url: HOOK_URL, eventTypes: ['email.sent', 'email.replied'] } }),
    errors: {
      400: (f) => f.c.POST('/v2/webhook/create', { body: { url: 'ftp://x.test/', eventTypes: ['email.sent'] } }),
      404: (f) =>
        f.c.POST('/v2/webhook/create', { body: { url: HOOK_URL, eventTypes: ['email.sent'], campaignId: MISSING } }),
    },
  },
  'GET /v2/webhook/list': {
    ok: async (f) => {
      await hook(f);
      return f.c.GET('/v2/webhook/list', { params: { query: { limit: 5 } } });
    },
    errors: { 400: (f) => f.c.GET('/v2/webhook/list', { params: { query: { limit: 0 } } }) },
  },
  'GET /v2/webhook/get': {
    ok: async (f) => f.c.GET('/v2/webhook/get', { params: { query: { id: await hook(f) } } }),
    errors: { 404: async (f) => f.otherC.GET('/v2/webhook/get', { params: { query: { id: await hook(f) } } }) },
  },
  'POST /v2/webhook/update': {
    ok: async (f) =>
      f.c.POST('/v2/webhook/update', {
        body: { id: await hook(f), eventTypes: ['campaign.launched'], description: 'CRM' },
      }),
    errors: { 404: (f) => f.c.POST('/v2/webhook/update', { body: { id: MISSING } }) },
  },
  'POST /v2/webhook/delete': {
    ok: async (f) => f.c.POST('/v2/webhook/delete', { body: { id: await hook(f) } }),
    errors: { 404: (f) => f.c.POST('/v2/webhook/delete', { body: { id: MISSING } }) },
  },
  'POST /v2/webhook/test': {
    ok: async (f) => f.c.POST('/v2/webhook/test', { body: { id: await hook(f) } }),
    errors: { 404: (f) => f.c.POST('/v2/webhook/test', { body: { id: MISSING } }) },
  },
  'POST /v2/webhook/resume': {
    ok: async (f) => f.c.POST('/v2/webhook/resume', { body: { id: await hook(f) } }),
    errors: { 404: (f) => f.c.POST('/v2/webhook/resume', { body: { id: MISSING } }) },
  },
  'POST /v2/webhook/rotate-secret': {
    ok: async (f) => f.c.POST('/v2/webhook/rotate-secret', { body: { id: await hook(f) } }),
    errors: { 404: (f) => f.c.POST('/v2/webhook/rotate-secret', { body: { id: MISSING } }) },
  },
  'GET /v2/webhook/deliveries': {
    ok: async (f) => f.c.GET('/v2/webhook/deliveries', { params: { query: { id: await hook(f) } } }),
    errors: { 404: (f) => f.c.GET('/v2/webhook/deliveries', { params: { query: { id: MISSING } } }) },
  },
  'POST /v2/webhook/retry': {
    ok: async (f) => {
      await hook(f);
      const ws = f.ws.workspaceId;
      await f.t.db.transaction((trx) =>
        f.t.services.events.record(trx, { workspaceId: ws, type: 'email.sent', data: { email: 'a@b.test' }, mail: {} }),
      );
      const delivery = await found(
        f.t.db('webhook_deliveries').where({ workspace_id: ws }).first<Pick<DeliveryRow, 'id'> | undefined>('id'),
        'webhook delivery',
      );
      return f.c.POST('/v2/webhook/retry', { body: { deliveryId: delivery.id } });
    },
    errors: { 404: (f) => f.c.POST('/v2/webhook/retry', { body: { deliveryId: MISSING } }) },
  },

  // Sending and suppression
  'GET /v2/campaign/sending-status': {
    ok: async (f) => f.c.GET('/v2/campaign/sending-status', { params: { query: { campaignId: await f.campaign() } } }),
    errors: {
      400: (f) => f.c.GET('/v2/campaign/sending-status', { params: { query: { campaignId: 'nope' } } }),
      404: async (f) =>
        f.c.GET('/v2/campaign/sending-status', { params: { query: { campaignId: await f.campaign(f.otherC) } } }),
    },
  },
  'GET /v2/campaign/preview': {
    ok: async (f) => {
      const { campaignId, contactId } = await f.contact();
      return f.c.GET('/v2/campaign/preview', { params: { query: { campaignId, contactId } } });
    },
    errors: {
      400: (f) => f.c.GET('/v2/campaign/preview', { params: { query: { campaignId: 'nope', contactId: MISSING } } }),
      404: async (f) => {
        const { contactId } = await f.contact(f.otherC);
        return f.c.GET('/v2/campaign/preview', { params: { query: { campaignId: await f.campaign(), contactId } } });
      },
    },
  },
  'POST /v2/suppression/add': {
    ok: (f) =>
      f.c.POST('/v2/suppression/add', { body: { values: ['jane@acme.com', 'competitor.io', 'not an address'] } }),
    errors: { 400: (f) => f.c.POST('/v2/suppression/add', { body: { values: [] } }) },
  },
  'GET /v2/suppression/list': {
    ok: async (f) => {
      await f.c.POST('/v2/suppression/add', { body: { values: ['listed@acme.com'] } });
      return f.c.GET('/v2/suppression/list', { params: { query: { limit: 5, search: 'acme' } } });
    },
    errors: { 400: (f) => f.c.GET('/v2/suppression/list', { params: { query: { limit: 0 } } }) },
  },
  'POST /v2/suppression/remove': {
    ok: (f) => f.c.POST('/v2/suppression/remove', { body: { values: ['jane@acme.com', 'never@listed.io'] } }),
    errors: { 400: (f) => f.c.POST('/v2/suppression/remove', { body: { values: [''] } }) },
  },

  // Inbox
  'GET /v2/email/list': {
    ok: async (f) => {
      await thread(f);
      return f.c.GET('/v2/email/list', { params: { query: { direction: 'inbound', unread: true, limit: 5 } } });
    },
    errors: {
      400: (f) => f.c.GET('/v2/email/list', { params: { query: { cursor: 'not-a-cursor' } } }),
      401: (f) => f.bad.GET('/v2/email/list'),
    },
  },
  'GET /v2/email/get': {
    ok: async (f) => f.c.GET('/v2/email/get', { params: { query: { id: (await thread(f)).inboundId } } }),
    errors: {
      400: (f) => f.c.GET('/v2/email/get', { params: { query: { id: 'nope' } } }),
      404: async (f) => f.otherC.GET('/v2/email/get', { params: { query: { id: (await thread(f)).inboundId } } }),
    },
  },
  'POST /v2/email/mark-read': {
    ok: async (f) => f.c.POST('/v2/email/mark-read', { body: { ids: [(await thread(f)).inboundId], read: true } }),
    errors: { 400: (f) => f.c.POST('/v2/email/mark-read', { body: { ids: [] } }) },
  },
  'POST /v2/email/reply': {
    ok: async (f) =>
      f.c.POST('/v2/email/reply', { body: { id: (await thread(f)).inboundId, text: 'Thursday works.' } }),
    errors: {
      400: (f) => f.c.POST('/v2/email/reply', { body: { id: MISSING, text: '' } }),
      404: (f) => f.c.POST('/v2/email/reply', { body: { id: MISSING, text: 'Hello' } }),
      409: async (f) =>
        f.c.POST('/v2/email/reply', {
          body: { id: (await thread(f, { accountless: true })).inboundId, text: 'Hello' },
        }),
    },
  },
  'GET /v2/event/list': {
    ok: async (f) => {
      await thread(f);
      return f.c.GET('/v2/event/list', {
        params: { query: { types: ['account.statusChanged', 'email.replied'], limit: 10 } },
      });
    },
    errors: {
      400: (f) => f.c.GET('/v2/event/list', { params: { query: { after: 'not-a-cursor' } } }),
      401: (f) => f.bad.GET('/v2/event/list'),
    },
  },
  'POST /v2/email/set-intent': {
    ok: async (f) =>
      f.c.POST('/v2/email/set-intent', {
        body: {
          id: (await thread(f)).inboundId,
          intent: 'wrongPerson',
          referral: { name: 'Maria Lopez', email: 'maria@globex.com' },
        },
      }),
    errors: {
      400: (f) =>
        f.c.POST('/v2/email/set-intent', {
          body: { id: MISSING, intent: 'interested', referral: { name: 'Maria Lopez', email: null } },
        }),
      404: (f) => f.c.POST('/v2/email/set-intent', { body: { id: MISSING, intent: 'interested' } }),
      409: async (f) =>
        f.c.POST('/v2/email/set-intent', { body: { id: (await thread(f)).outboundId, intent: 'interested' } }),
    },
  },

  // Jobs
  'POST /v2/job/contact-import': {
    ok: async (f) =>
      f.c.POST('/v2/job/contact-import', {
        body: { campaignId: await f.campaign(), contacts: [{ email: 'jane.doe@acme.com' }] },
      }),
    errors: {
      400: (f) => f.c.POST('/v2/job/contact-import', { body: { campaignId: MISSING, contacts: [] } }),
      404: (f) =>
        f.c.POST('/v2/job/contact-import', {
          body: { campaignId: MISSING, contacts: [{ email: 'jane.doe@acme.com' }] },
        }),
    },
  },
  'POST /v2/job/verify': {
    ok: (f) => f.c.POST('/v2/job/verify', { body: { emails: ['jane.doe@acme.com'] } }),
    errors: { 400: (f) => f.c.POST('/v2/job/verify', { body: { emails: [] } }) },
  },
  'POST /v2/job/enrich': {
    ok: (f) => f.c.POST('/v2/job/enrich', { body: { people: [{ email: 'nobody@acme.com' }] } }),
    errors: {
      400: (f) => f.c.POST('/v2/job/enrich', { body: { people: [] } }),
      402: async (f) => {
        const poor = await f.t.createWorkspace({ credits: 0 });
        const person = await found(
          f.t.db('people').whereNotNull('work_email').first<{ work_email: string } | undefined>('work_email'),
          'person with a work email',
        );
        return f.clientFor(poor.apiKey).POST('/v2/job/enrich', { body: { people: [{ email: person.work_email }] } });
      },
    },
  },
  'POST /v2/placement/create': {
    ok: async (f) => {
      await poolMailbox(f);
      return f.c.POST('/v2/placement/create', {
        body: { accountIds: [await f.account()], subject: 'Hi', text: 'Hello', recipientCount: 1 },
      });
    },
    errors: {
      400: (f) => f.c.POST('/v2/placement/create', { body: { accountIds: [], subject: 'Hi', text: 'Hello' } }),
      404: async (f) =>
        f.c.POST('/v2/placement/create', {
          body: { accountIds: [await f.account(f.otherC)], subject: 'Hi', text: 'Hello' },
        }),
      409: async (f) => {
        const accountId = await f.account();
        await f.t.db('email_accounts').where({ id: accountId }).update({ status: 'paused' });
        return f.c.POST('/v2/placement/create', { body: { accountIds: [accountId], subject: 'Hi', text: 'Hello' } });
      },
    },
  },
  'GET /v2/placement/get': {
    ok: async (f) => f.c.GET('/v2/placement/get', { params: { query: { id: await placementTest(f) } } }),
    errors: {
      400: (f) => f.c.GET('/v2/placement/get', { params: { query: { id: 'nope' } } }),
      404: async (f) => f.otherC.GET('/v2/placement/get', { params: { query: { id: await placementTest(f) } } }),
    },
  },
  'GET /v2/placement/list': {
    ok: (f) => f.c.GET('/v2/placement/list', { params: { query: { status: 'running' } } }),
    errors: { 400: (f) => f.c.GET('/v2/placement/list', { params: { query: { status: 'paused' as never } } }) },
  },
  'GET /v2/job/get': {
    ok: async (f) => f.c.GET('/v2/job/get', { params: { query: { jobId: await job(f) } } }),
    errors: { 404: async (f) => f.otherC.GET('/v2/job/get', { params: { query: { jobId: await job(f) } } }) },
  },
  'GET /v2/job/list': {
    ok: (f) => f.c.GET('/v2/job/list', { params: { query: { type: 'verify' } } }),
    errors: { 400: (f) => f.c.GET('/v2/job/list', { params: { query: { status: 'paused' as never } } }) },
  },
  'POST /v2/job/cancel': {
    ok: async (f) => f.c.POST('/v2/job/cancel', { body: { jobId: await job(f) } }),
    errors: {
      404: (f) => f.c.POST('/v2/job/cancel', { body: { jobId: MISSING } }),
      409: async (f) => {
        const jobId = await job(f);
        await f.c.POST('/v2/job/cancel', { body: { jobId } });
        return f.c.POST('/v2/job/cancel', { body: { jobId } });
      },
    },
  },
  'GET /v2/job/results': {
    ok: async (f) => f.c.GET('/v2/job/results', { params: { query: { jobId: await job(f) } }, parseAs: 'text' }),
    errors: { 404: (f) => f.c.GET('/v2/job/results', { params: { query: { jobId: MISSING } } }) },
  },
  'POST /v2/api-key/create': {
    ok: (f) => f.c.POST('/v2/api-key/create', { body: { name: 'Contract', scopes: ['campaigns:read'] } }),
    errors: {
      400: (f) => f.c.POST('/v2/api-key/create', { body: { name: 'Contract', scopes: ['rockets:launch'] } }),
      403: async (f) =>
        f
          .clientFor(await apiKey(f, ['campaigns:read']))
          .POST('/v2/api-key/create', { body: { name: 'x', scopes: ['campaigns:read'] } }),
    },
  },
  'GET /v2/api-key/list': {
    ok: (f) => f.c.GET('/v2/api-key/list', { params: { query: { limit: 5 } } }),
    errors: { 400: (f) => f.c.GET('/v2/api-key/list', { params: { query: { limit: 0 } } }) },
  },
  'POST /v2/api-key/revoke': {
    ok: async (f) => f.c.POST('/v2/api-key/revoke', { body: { id: await keyId(f) } }),
    errors: {
      404: (f) => f.c.POST('/v2/api-key/revoke', { body: { id: MISSING } }),
      409: (f) => f.otherC.POST('/v2/api-key/revoke', { body: { id: f.other.keyId } }),
    },
  },
  'POST /v2/api-key/rotate': {
    ok: async (f) => f.c.POST('/v2/api-key/rotate', { body: { id: await keyId(f), overlapSeconds: 60 } }),
    errors: {
      404: (f) => f.c.POST('/v2/api-key/rotate', { body: { id: MISSING, overlapSeconds: 0 } }),
      409: async (f) => {
        const id = await keyId(f);
        await f.c.POST('/v2/api-key/revoke', { body: { id } });
        return f.c.POST('/v2/api-key/rotate', { body: { id, overlapSeconds: 0 } });
      },
    },
  },
  'GET /v2/audit/list': {
    ok: (f) => f.c.GET('/v2/audit/list', { params: { query: { limit: 5 } } }),
    errors: { 400: (f) => f.c.GET('/v2/audit/list', { params: { query: { cursor: 'nope' } } }) },
  },
  'GET /v2/usage': {
    ok: (f) => f.c.GET('/v2/usage'),
    // It takes no parameter: one it does not know is a 400.
    errors: { 400: (f) => f.c.GET('/v2/usage', { params: { query: { since: 'yesterday' } as never } }) },
  },
  'GET /v2/credits/ledger': {
    ok: (f) => f.c.GET('/v2/credits/ledger', { params: { query: { limit: 5 } } }),
    errors: { 400: (f) => f.c.GET('/v2/credits/ledger', { params: { query: { cursor: 'nope' } } }) },
  },
  // Tracking domains, account settings and sending settings
  'POST /v2/tracking-domain/create': {
    ok: (f) => f.c.POST('/v2/tracking-domain/create', { body: { domain: trackingDomainName() } }),
    errors: {
      400: (f) => f.c.POST('/v2/tracking-domain/create', { body: { domain: 'https://track.acme.test/' } }),
      409: async (f) => {
        const domain = trackingDomainName();
        await f.c.POST('/v2/tracking-domain/create', { body: { domain } });
        return f.c.POST('/v2/tracking-domain/create', { body: { domain } });
      },
    },
  },
  'GET /v2/tracking-domain/list': {
    ok: (f) => f.c.GET('/v2/tracking-domain/list', { params: { query: { limit: 5 } } }),
    errors: { 400: (f) => f.c.GET('/v2/tracking-domain/list', { params: { query: { limit: 0 } } }) },
  },
  'GET /v2/tracking-domain/get': {
    ok: async (f) => f.c.GET('/v2/tracking-domain/get', { params: { query: { id: await trackingDomain(f) } } }),
    errors: {
      404: async (f) => f.otherC.GET('/v2/tracking-domain/get', { params: { query: { id: await trackingDomain(f) } } }),
    },
  },
  'POST /v2/tracking-domain/verify': {
    ok: async (f) => f.c.POST('/v2/tracking-domain/verify', { body: { id: await trackingDomain(f) } }),
    errors: { 404: (f) => f.c.POST('/v2/tracking-domain/verify', { body: { id: MISSING } }) },
  },
  'POST /v2/tracking-domain/delete': {
    ok: async (f) => f.c.POST('/v2/tracking-domain/delete', { body: { id: await trackingDomain(f) } }),
    errors: { 404: (f) => f.c.POST('/v2/tracking-domain/delete', { body: { id: MISSING } }) },
  },
  'GET /v2/account/get': {
    ok: async (f) => f.c.GET('/v2/account/get', { params: { query: { accountId: await f.account() } } }),
    errors: {
      400: (f) => f.c.GET('/v2/account/get', { params: { query: {} } }),
      404: async (f) => f.c.GET('/v2/account/get', { params: { query: { accountId: await f.account(f.otherC) } } }),
    },
  },
  // The fixture's server does not try mail logins (VERIFY_MAIL_LOGINS off): reconnect stores and answers.
  'POST /v2/account/reconnect': {
    ok: async (f) =>
      f.c.POST('/v2/account/reconnect', { body: { accountId: await f.account(), password: 'new-secret' } }),
    errors: {
      400: (f) => f.c.POST('/v2/account/reconnect', { body: { accountId: 'nope' } }),
      404: async (f) => f.c.POST('/v2/account/reconnect', { body: { accountId: await f.account(f.otherC) } }),
    },
  },
  'POST /v2/account/update': {
    ok: async (f) => f.c.POST('/v2/account/update', { body: { accountId: await f.account(), trackingDomainId: null } }),
    errors: {
      400: (f) => f.c.POST('/v2/account/update', { body: { accountId: 'nope' } }),
      404: (f) => f.c.POST('/v2/account/update', { body: { accountId: MISSING } }),
      // The domain has no record in the fixture's DNS: pending, not verified.
      409: async (f) =>
        f.c.POST('/v2/account/update', {
          body: { accountId: await f.account(), trackingDomainId: await trackingDomain(f) },
        }),
    },
  },
  'GET /v2/sending/settings': {
    ok: (f) => f.c.GET('/v2/sending/settings'),
    errors: { 401: (f) => f.bad.GET('/v2/sending/settings') },
  },
  'POST /v2/sending/settings': {
    ok: (f) => f.c.POST('/v2/sending/settings', { body: { recipientDomainDailyLimit: 50 } }),
    errors: { 400: (f) => f.c.POST('/v2/sending/settings', { body: { recipientDomainDailyLimit: 0 } }) },
  },
};

/** A new key of the main workspace with these scopes: its secret. */
async function apiKey(f: Fixture, scopes: string[]): Promise<string> {
  const r = await f.c.POST('/v2/api-key/create', { body: { name: 'Contract', scopes } });
  return r.data!.data.apiKey;
}

async function keyId(f: Fixture): Promise<string> {
  const r = await f.c.POST('/v2/api-key/create', { body: { name: 'Contract', scopes: ['campaigns:read'] } });
  return r.data!.data.key.id;
}

const SCHEDULE_FOR_CREATE = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };
