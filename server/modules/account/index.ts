/** The account module's face: what other modules may use of it. */
import { AccountMailAccess } from './service';
import { AccountService } from './service';
import { OAuthConnectService } from './oauth';
export { accountNotFound } from './service';
export type { AccountMailAccess, AccountRow, AccountService } from './service';

type AccountServiceArgs = ConstructorParameters<typeof AccountService>;
/** What AccountService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface AccountModuleDeps {
  db: AccountServiceArgs[0];
  store: AccountServiceArgs[1];
  events: AccountServiceArgs[2];
  campaigns: AccountServiceArgs[3];
  workspaces: AccountServiceArgs[4];
  secrets: AccountServiceArgs[5];
  dns: AccountServiceArgs[6];
  config: AccountServiceArgs[7];
  clock: AccountServiceArgs[8];
  warmupSentToday: AccountServiceArgs[9];
  warmupHealth: AccountServiceArgs[10];
  placementSentToday: AccountServiceArgs[11];
  trackingDomains: AccountServiceArgs[12];
  mailboxProviders: AccountServiceArgs[13];
  loginCheck?: AccountServiceArgs[14];
}
export const createAccountModule = (d: AccountModuleDeps) =>
  new AccountService(
    d.db,
    d.store,
    d.events,
    d.campaigns,
    d.workspaces,
    d.secrets,
    d.dns,
    d.config,
    d.clock,
    d.warmupSentToday,
    d.warmupHealth,
    d.placementSentToday,
    d.trackingDomains,
    d.mailboxProviders,
    d.loginCheck,
  );

type OAuthConnectServiceArgs = ConstructorParameters<typeof OAuthConnectService>;
/** What OAuthConnectService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface OAuthConnectModuleDeps {
  db: OAuthConnectServiceArgs[0];
  sessions: OAuthConnectServiceArgs[1];
  accounts: OAuthConnectServiceArgs[2];
  store: OAuthConnectServiceArgs[3];
  mail: OAuthConnectServiceArgs[4];
  secrets: OAuthConnectServiceArgs[5];
  events: OAuthConnectServiceArgs[6];
  clock: OAuthConnectServiceArgs[7];
  publicUrl: OAuthConnectServiceArgs[8];
}
export const createOAuthConnectModule = (d: OAuthConnectModuleDeps) =>
  new OAuthConnectService(d.db, d.sessions, d.accounts, d.store, d.mail, d.secrets, d.events, d.clock, d.publicUrl);

type AccountMailAccessArgs = ConstructorParameters<typeof AccountMailAccess>;
/** What AccountMailAccess is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface MailAccessModuleDeps {
  store: AccountMailAccessArgs[0];
  secrets: AccountMailAccessArgs[1];
  clock: AccountMailAccessArgs[2];
  events: AccountMailAccessArgs[3];
}
export const createMailAccessModule = (d: MailAccessModuleDeps) =>
  new AccountMailAccess(d.store, d.secrets, d.clock, d.events);
