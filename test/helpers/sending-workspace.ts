/**
 * For test files that send through the engine into an SMTP sink: a test server, the sink, and one workspace
 * whose SMTP account sends into it; the week of each test; and a campaign on that account that sends as fast
 * as its schedule lets it.
 */
import type { Config } from '../../server/platform/config';
import { startTestServer, type TestServer, type TestWorkspace } from './server';
import { startSmtpSink, type SmtpSink } from './smtp-sink';

const WEEK = 7 * 24 * 3600_000;

const weekdaysUtc = { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };

export interface SendingWorkspace {
  t: TestServer;
  sink: SmtpSink;
  ws: TestWorkspace;
  /** The SMTP account's id. */
  account: string;
}

/** Starts the sink and the server and connects `email` (SMTP into the sink, `dailyLimit` a day). */
export async function startSendingWorkspace(setup: {
  email: string;
  dailyLimit: number;
  config: Partial<Config>;
  /** Tracked links point at the test server itself, so a test can follow them. */
  linksToServer?: boolean;
}): Promise<SendingWorkspace> {
  const sink = await startSmtpSink();
  const t = await startTestServer({ config: { allowPrivateMailHosts: true, ...setup.config } });
  if (setup.linksToServer) (t.services.tracking as unknown as { publicUrl: string }).publicUrl = t.url;
  const ws = await t.createWorkspace();
  const res = await ws.client.POST('/v2/account/connect', {
    body: {
      email: setup.email,
      provider: 'smtp',
      dailyLimit: setup.dailyLimit,
      smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
    } as never,
  });
  if (res.response.status !== 201) throw new Error(`connect failed: ${res.response.status}`);
  return { t, sink, ws, account: res.data!.data.account.id };
}

export async function closeSendingWorkspace({ t, sink }: SendingWorkspace): Promise<void> {
  t.services.mail.close();
  await t.close();
  await sink.close();
}

/**
 * Empties the sink and sets the clock to a Monday 10:00 UTC, `week` weeks after 2026-11-23, so that the shared
 * account's pace never carries over from one test to the next. Returns the time set.
 */
export function startWeek({ t, sink }: SendingWorkspace, week: number): number {
  sink.received.length = 0;
  const monday = Date.parse('2026-11-23T10:00:00.000Z') + week * WEEK;
  t.clock.set(new Date(monday));
  return monday;
}

/** A draft campaign on the account, with no gap or random wait between sends and no tracking unless asked. */
export async function draftCampaign(
  { ws, account }: SendingWorkspace,
  name: string,
  { schedule = weekdaysUtc, options = {} }: { schedule?: object; options?: object } = {},
): Promise<string> {
  const created = await ws.client.POST('/v2/campaign/create', {
    body: {
      name,
      accountIds: [account],
      schedule,
      options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0, trackOpens: false, trackClicks: false, ...options },
    } as never,
  });
  if (created.response.status !== 201) throw new Error(`create failed: ${created.response.status}`);
  return created.data!.data.campaign.id;
}
