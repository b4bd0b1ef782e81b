/**
 * The demo week, read back through the API as a new user would after the first start: a paused campaign
 * whose analytics count what the sending engine sent and what the tracking links and the inbox recorded,
 * contacts at several steps, replies of each intent in the unibox, and a stand-in mailbox that sends nothing more.
 */
import { expect } from '@jest/globals';
import { DEMO_CONTACTS, makeDemoWeek, type DemoWeek } from '../../server/demo';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

describe('the demo week', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let week: DemoWeek;

  beforeAll(async () => {
    // With metrics on, as a deployment with METRICS_PORT: the demo's own services register none of them again.
    t = await startTestServer({ metrics: true });
    ws = await t.createWorkspace();
    week = await makeDemoWeek(t.deps, ws.workspaceId);
  }, 180_000);
  afterAll(() => t?.close());

  it("counts in the campaign's analytics what was sent, opened, clicked, answered and bounced over seven days", async () => {
    const { data } = await ws.client.GET('/v1/analytics/campaign/summary', {
      params: { query: { campaignId: week.campaignId } },
    });
    const { unique, totals, graph } = data!.data;
    expect(unique).toMatchObject({ sent: 48, replied: 6, bounced: 1, unsubscribed: 1 });
    expect(totals.sent).toBe(week.sent);
    expect(totals.sent).toBeGreaterThan(48);
    expect(unique.opened).toBeGreaterThan(20);
    expect(unique.clicked).toBeGreaterThan(5);
    expect(graph.filter((day) => day.sent > 0).length).toBeGreaterThanOrEqual(7);
    const campaign = await ws.client.GET('/v1/campaign/get/status', {
      params: { query: { campaignId: week.campaignId } },
    });
    expect(campaign.data!.data.status).toBe('paused');
  });

  it('leaves contacts at every step: some finished, some waiting for a follow-up', async () => {
    const states = new Map<string, number>();
    for (const { email } of DEMO_CONTACTS) {
      const { data } = await ws.client.GET('/v2/contact/get', {
        params: { query: { campaignId: week.campaignId, email } },
      });
      const { state, stepsSent } = data!.data.progress!;
      states.set(`${state}:${stepsSent}`, (states.get(`${state}:${stepsSent}`) ?? 0) + 1);
    }
    expect([...states.keys()].filter((k) => k.startsWith('waiting:')).length).toBeGreaterThanOrEqual(2);
    expect(states.get('done:3')).toBeGreaterThan(0);
  });

  it('shows the replies in the unibox with the intent each was classified with', async () => {
    const { data } = await ws.client.GET('/v2/email/list', { params: { query: { direction: 'inbound', limit: 100 } } });
    const intents = data!.data.items.filter((m) => m.kind === 'reply').map((m) => m.intent);
    expect(new Set(intents)).toEqual(
      new Set(['interested', 'meetingRequest', 'notInterested', 'unsubscribeRequest', 'wrongPerson', 'question']),
    );
    expect(data!.data.items.map((m) => m.kind).sort()).toEqual(expect.arrayContaining(['autoReply', 'bounce']));
  });

  it('sends nothing more from its stand-in mailboxes', async () => {
    t.clock.advance(3 * 86_400_000);
    expect(await t.services.sending.runOnce()).toBe(0);
  });
});
