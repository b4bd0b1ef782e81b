/** The mail module's face: what other modules may use of it. */
import { MailService, type MailServiceDeps } from './service';
export {
  CONNECTIONS_PER_ACCOUNT,
  MailboxError,
  OAuthError,
  PROVIDER_SETTING,
  pkcePair,
  probeMailbox,
  readMailbox,
  replySubject,
} from './service';
export type {
  Composed,
  LoginFailure,
  MailLogin,
  MailService,
  MailboxSession,
  MessageRow,
  OAuthClients,
  OAuthProvider,
  OAuthProviderName,
  ProbeOutcome,
  SendOutcome,
  TokenAnswer,
} from './service';

export const createMailModule = (deps: MailServiceDeps) => new MailService(deps);
