/** The mail module's face: what other modules may use of it. */
import { MailService } from './service';
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

type MailServiceArgs = ConstructorParameters<typeof MailService>;
/** What MailService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface MailModuleDeps {
  db: MailServiceArgs[0];
  store: MailServiceArgs[1];
  clock: MailServiceArgs[2];
  logger: MailServiceArgs[3];
  settings: MailServiceArgs[4];
  oauth: MailServiceArgs[5];
}
export const createMailModule = (d: MailModuleDeps) =>
  new MailService(d.db, d.store, d.clock, d.logger, d.settings, d.oauth);
