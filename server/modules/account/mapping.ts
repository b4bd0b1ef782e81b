/** Account rows to the spec's shapes (shared with analytics and any module that shows accounts). */
import type { components } from '../../../generated/api';
import type { AccountRow } from './store';

type Schemas = components['schemas'];
type WarmupReason = Schemas['WarmupReason'];

/**
 * Why a warm-up is not running, or null. A stored reason (a pause, a ban, a pool too small) comes first;
 * otherwise the account's own state: a refused login takes it out of the pool until the login works again.
 */
export function warmupReason(row: AccountRow): WarmupReason | null {
  if (row.warmup_reason_code)
    return { code: row.warmup_reason_code as WarmupReason['code'], message: row.warmup_reason_message ?? '' };
  if (!row.warmup_enabled || row.warmup_status !== 'active') return null;
  if (row.status === 'connectionError')
    return {
      code: 'login_failed',
      message: `Out of the warm-up pool until the login works again: ${row.status_reason ?? 'the mail server refused the login'}.`,
    };
  if (row.status !== 'active')
    return { code: 'account_not_active', message: `Out of the warm-up pool while the account is ${row.status}.` };
  return null;
}

/** How the account logs in: its password, or the OAuth grant of its provider. */
export function toAccountAuth(row: AccountRow): Schemas['EmailAccountAuth'] {
  return {
    type: row.auth_type,
    provider: row.auth_type === 'oauth2' ? row.oauth_provider : null,
  };
}

/** The account can log in to IMAP: a host, and a password or its OAuth grant. */
export function hasImapLogin(row: AccountRow): boolean {
  return row.imap_host !== null && (row.imap_password_enc !== null || row.auth_type === 'oauth2');
}

/** In the pool: enabled, running, the account active and readable (warm-up needs IMAP). */
export function inWarmupPool(row: AccountRow): boolean {
  return row.warmup_enabled && row.warmup_status === 'active' && row.status === 'active' && hasImapLogin(row);
}

export function toWarmup(row: AccountRow): Schemas['EmailAccountWarmup'] {
  return {
    enabled: row.warmup_enabled,
    status: row.warmup_status,
    reason: warmupReason(row),
    inPool: inWarmupPool(row),
    dailyLimit: row.warmup_daily_limit,
    increasePerDay: row.warmup_increase_per_day,
    replyRatePercent: row.warmup_reply_rate_percent,
    windowFrom: row.warmup_window_from,
    windowTo: row.warmup_window_to,
    weekdaysOnly: row.warmup_weekdays_only,
  };
}

function server(
  host: string | null,
  port: number | null,
  username: string | null,
): Schemas['EmailAccountServer'] | null {
  return host && port && username ? { host, port, username } : null;
}

/** `sent`: campaign and warm-up sends today in the workspace's time zone; `trackingDomain`: the chosen one, as it is now. */
export function toAccount(
  row: AccountRow,
  sent: { campaign: number; warmup: number },
  trackingDomain: Schemas['TrackingDomainChoice'] | null,
  /** The mailbox provider of an SMTP account's domain, as last looked up. */
  smtpMailboxProvider: Schemas['MailboxProvider'] | null,
): Schemas['EmailAccount'] {
  return {
    id: row.id,
    email: row.email,
    provider: row.provider,
    status: row.status,
    auth: toAccountAuth(row),
    dailyLimit: row.daily_limit,
    sentToday: sent.campaign,
    warmupSentToday: sent.warmup,
    warmup: toWarmup(row),
    smtp: server(row.smtp_host, row.smtp_port, row.smtp_user),
    imap: server(row.imap_host, row.imap_port, row.imap_user),
    trackingDomain,
    mailboxProvider: row.provider === 'smtp' ? smtpMailboxProvider : row.provider,
    bounceProtection: { ratePercent: row.bounce_rate_percent, window: row.bounce_window },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
