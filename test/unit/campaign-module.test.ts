/**
 * The campaign module built on its own (createCampaignModule) with fakes of the modules it asks: the
 * account module (which linked accounts may send), the sending engine (progress rows), the event log and
 * tracking domains. Its launch and pause rules run against its own store, with no other module behind them.
 */
import { expect } from '@jest/globals';
import type { Executor } from '../../server/db';
import { DomainError } from '../../server/platform/errors';
import { newId } from '../../server/platform/ids';
import { createCampaignModule } from '../../server/modules/campaign';
import { CampaignStore } from '../../server/modules/campaign/store';
import { UNFINISHED_STATUSES } from '../../server/modules/contact';
import { bareWorkspace } from '../helpers/bare-workspace';
import { TestClock } from '../helpers/clock';
import { migratedDatabase } from '../helpers/server';

type Database = Awaited<ReturnType<typeof migratedDatabase>>;

describe('the campaign module with fakes of its neighbours', () => {
  let database: Database;
  const clock = new TestClock('2026-12-01T09:00:00Z');
  const recorded: { type: string; data: unknown }[] = [];
  const started: string[] = [];
  let sendable = 0;
  let campaigns: ReturnType<typeof createCampaignModule>;
  let workspaceId: string;

  beforeAll(async () => {
    database = await migratedDatabase();
    workspaceId = await bareWorkspace(database.db, clock.now());
    campaigns = createCampaignModule({
      db: database.db,
      store: new CampaignStore({ unfinished: UNFINISHED_STATUSES }),
      events: {
        record: (_trx: Executor, input: { type: string; data: unknown }) => {
          recorded.push({ type: input.type, data: input.data });
          return Promise.resolve(undefined as never);
        },
      },
      accounts: {
        summaries: () => Promise.resolve(new Map()),
        countActive: () => Promise.resolve(sendable),
        existingIds: (_db: Executor, _ws: string, ids: string[]) => Promise.resolve(new Set(ids)),
      },
      progress: {
        startCampaign: (_trx: Executor, campaignId: string) => {
          started.push(campaignId);
          return Promise.resolve();
        },
      },
      clock,
      trackingDomains: { requireVerified: () => Promise.resolve() },
    });
  });
  afterAll(() => database?.close());

  const codesOf = async (work: Promise<unknown>) => {
    const err = await work.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    return { kind: (err as DomainError).kind, codes: (err as DomainError).details.map((d) => d.code) };
  };

  it('refuses to launch naming every missing piece, and starts nothing', async () => {
    const campaign = await campaigns.create(workspaceId, { name: 'Empty' });
    expect(await codesOf(campaigns.launch(workspaceId, campaign.id))).toEqual({
      kind: 'conflict',
      codes: ['no_sequence_step', 'no_active_account', 'no_schedule'],
    });
    expect(started).toEqual([]);
    expect(recorded).toEqual([]);
  });

  it('launches once the step, a sending account and the schedule are there: progress started, event recorded', async () => {
    const campaign = await campaigns.create(workspaceId, {
      name: 'Ready',
      schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' },
    });
    await campaigns.createSteps(workspaceId, campaign.id, [
      { delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] },
    ]);
    expect((await codesOf(campaigns.launch(workspaceId, campaign.id))).codes).toEqual(['no_active_account']);
    sendable = 1;
    expect((await campaigns.launch(workspaceId, campaign.id)).status).toBe('active');
    expect(started).toEqual([campaign.id]);
    expect(recorded).toEqual([{ type: 'campaign.launched', data: { campaignId: campaign.id, name: 'Ready' } }]);
    expect(await codesOf(campaigns.launch(workspaceId, campaign.id))).toEqual({
      kind: 'conflict',
      codes: ['invalid_status'],
    });
  });

  it("answers another workspace's campaign as not found", async () => {
    const campaign = await campaigns.create(workspaceId, { name: 'Mine' });
    expect((await codesOf(campaigns.pause(newId(), campaign.id))).kind).toBe('notFound');
  });
});
