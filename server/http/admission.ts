/**
 * What authentication and the quota agree on: the caller a valid key stands for and the quota's
 * decision on its request. Its own file so that auth.ts (which reads an admission) and quota.ts (which
 * makes one) depend on it rather than on each other.
 */

export interface AuthContext {
  keyId: string;
  keyName: string | null;
  /** What the key may call (scopes.ts). */
  scopes: string[];
  workspaceId: string;
  workspaceName: string;
  whitelabelEnabled: boolean;
  timezone: string;
  limits: { perSecond: number | null; perMin: number; perHour: number; perDay: number };
}

/** One quota window as this request's count left it (GET /v2/usage shows them). */
export interface QuotaWindowUse {
  window: 'second' | 'minute' | 'hour' | 'day';
  seconds: 1 | 60 | 3600 | 86400;
  limit: number;
  used: number;
  remaining: number;
}

export interface QuotaDecision {
  admitted: boolean;
  /** Each limited window with this request counted, shortest first. */
  windows: QuotaWindowUse[];
  /** The longest full window, when not admitted. */
  exceeded?: { name: 'second' | 'minute' | 'hour' | 'day'; message: string };
  retryAfterSeconds?: number;
  headers: Record<string, string>;
}

/** What a presented key's hash comes to: unknown, revoked, or its workspace with this request counted. */
export type Admission =
  | { key: 'unknown' }
  | { key: 'revoked' }
  | { key: 'expired' }
  | { key: 'valid'; auth: AuthContext; decision: QuotaDecision };

/** What a presented key's hash comes to, with its request counted: the quota service, in one database call. */
export interface KeyAdmission {
  admit(keyHash: string): Promise<Admission>;
}
