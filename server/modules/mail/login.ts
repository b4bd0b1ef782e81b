/** What the mail module needs to reach an account's SMTP or IMAP server. */

/** A decrypted mail-server login, for the workers only (never returned by the API). */
export interface MailLogin {
  accountId: string;
  workspaceId: string;
  email: string;
  host: string;
  port: number;
  username: string;
  password: string;
}

/** Why a login try failed: `auth_failed`, `private_destination`, `unreachable` (refused, unknown host, timeout). */
export interface LoginFailure {
  reason: 'auth_failed' | 'private_destination' | 'unreachable';
  message: string;
}

export interface ConnectionOptions {
  /** Whether loopback and private addresses may be reached (tests, self-hosted relays). */
  allowPrivate: boolean;
  timeoutMs: number;
}
