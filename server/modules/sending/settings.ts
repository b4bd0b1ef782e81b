/** A workspace's sending settings: caps per recipient domain and bounce protection, the defaults filled in. */
import type { components } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { EngineOptions } from './options';
import type { SendingStore } from './store';

type SendingSettings = components['schemas']['SendingSettings'];

/** What WorkspaceSendingSettings is built from, by name. */
interface WorkspaceSendingSettingsDeps {
  db: Db;
  store: SendingStore;
  clock: Clock;
  defaults: Pick<EngineOptions, 'bounceRatePercent' | 'bounceWindow' | 'campaignBounceWindow'>;
}

/** Reads and changes the workspace's sending settings. */
export class WorkspaceSendingSettings {
  private readonly db: Db;
  private readonly store: SendingStore;
  private readonly clock: Clock;
  private readonly defaults: Pick<EngineOptions, 'bounceRatePercent' | 'bounceWindow' | 'campaignBounceWindow'>;

  constructor({ db, store, clock, defaults }: WorkspaceSendingSettingsDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.defaults = defaults;
  }
  /** The workspace's sending settings, the defaults filled in. */
  async read(db: Executor, workspaceId: string): Promise<SendingSettings> {
    const row = await this.store.settings(db, workspaceId);
    return {
      recipientDomainDailyLimit: row?.recipient_domain_daily_limit ?? null,
      bounceRatePercent: row?.bounce_rate_percent ?? this.defaults.bounceRatePercent,
      bounceWindow: row?.bounce_window ?? this.defaults.bounceWindow,
      campaignBounceRatePercent: row?.campaign_bounce_rate_percent ?? null,
      campaignBounceWindow: row?.campaign_bounce_window ?? this.defaults.campaignBounceWindow,
    };
  }

  async update(workspaceId: string, input: Partial<SendingSettings>): Promise<SendingSettings> {
    return this.db.transaction(async (trx) => {
      const next = { ...(await this.read(trx, workspaceId)), ...input };
      await this.store.saveSettings(trx, {
        workspace_id: workspaceId,
        recipient_domain_daily_limit: next.recipientDomainDailyLimit,
        bounce_rate_percent: next.bounceRatePercent,
        bounce_window: next.bounceWindow,
        campaign_bounce_rate_percent: next.campaignBounceRatePercent,
        campaign_bounce_window: next.campaignBounceWindow,
        updated_at: this.clock.now(),
      });
      return next;
    });
  }
}
