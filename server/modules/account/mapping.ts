/** Account rows to the spec's shapes (shared with analytics and any module that shows accounts). */
import type { components } from '../../../generated/api';
import type { AccountRow } from './store';

type Schemas = components['schemas'];

export function toWarmup(row: AccountRow): Schemas['EmailAccountWarmup'] {
  return {
    enabled: row.warmup_enabled,
    status: row.warmup_status,
    dailyLimit: row.warmup_daily_limit,
    increasePerDay: row.warmup_increase_per_day,
    replyRatePercent: row.warmup_reply_rate_percent,
  };
}

function server(host: string | null, port: number | null, username: string | null): Schemas['EmailAccountServer'] | null {
  return host && port && username ? { host, port, username } : null;
}

/** `sentToday`: campaign sends today in the workspace's time zone (AnalyticsStore.sentOnDay). */
export function toAccount(row: AccountRow, sentToday: number): Schemas['EmailAccount'] {
  return {
    id: row.id,
    email: row.email,
    provider: row.provider,
    status: row.status,
    dailyLimit: row.daily_limit,
    sentToday,
    warmup: toWarmup(row),
    smtp: server(row.smtp_host, row.smtp_port, row.smtp_user),
    imap: server(row.imap_host, row.imap_port, row.imap_user),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
