/**
 * Sequence limits hold under concurrent calls: ten simultaneous sequence-create calls on one campaign
 * never make more than 20 steps or two steps at one position, and simultaneous variants-create calls
 * on one step never make more than 26 variants.
 */
import { startTestServer, type TestServer } from '../helpers/server';

describe('sequence limits under concurrency', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('keeps at most 20 steps with distinct positions', async () => {
    const ws = await t.createWorkspace();
    const campaignId = (await ws.client.POST('/v2/campaign/create', { body: { name: 'Race' } })).data!.data.campaign.id;
    const step = (i: number) => ({ delayDays: i === 0 ? 0 : 1, variants: [{ subject: `S${i}`, body: 'B' }] });
    await ws.client.POST('/v2/campaign/sequence-create', { body: { campaignId, steps: [step(0)] } });
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        ws.client.POST('/v2/campaign/sequence-create', { body: { campaignId, steps: [1, 2, 3].map(step) } }),
      ),
    );
    const created = results.filter((r) => r.response.status === 201).length;
    expect(results.every((r) => r.response.status === 201 || r.response.status === 400)).toBe(true);
    const rows = await t
      .db('campaign_steps')
      .where({ campaign_id: campaignId })
      .select<{ step_order: number }[]>('step_order');
    expect(rows.length).toBe(1 + created * 3);
    expect(rows.length).toBeLessThanOrEqual(20);
    expect(new Set(rows.map((r) => r.step_order)).size).toBe(rows.length);
    expect(created).toBe(6);
  });

  it('keeps at most 26 variants on a step', async () => {
    const ws = await t.createWorkspace();
    const campaignId = (await ws.client.POST('/v2/campaign/create', { body: { name: 'Race variants' } })).data!.data
      .campaign.id;
    const made = await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId, steps: [{ delayDays: 0, variants: [{ subject: 'A', body: 'B' }] }] },
    });
    const stepId = made.data!.data.steps[0].id;
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        ws.client.POST('/v2/campaign/variants-create', {
          body: { stepId, variants: [1, 2, 3].map((i) => ({ subject: `V${i}`, body: 'B' })) },
        }),
      ),
    );
    const created = results.filter((r) => r.response.status === 201).length;
    const rows = await t.db('step_variants').where({ step_id: stepId }).select<{ label: string }[]>('label');
    expect(rows.length).toBe(1 + created * 3);
    expect(rows.length).toBeLessThanOrEqual(26);
    expect(new Set(rows.map((r) => r.label)).size).toBe(rows.length);
  });
});
