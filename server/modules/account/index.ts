/** The account module's face: what other modules may use of it. */
import { AccountMailAccess, type AccountMailAccessDeps } from './service';
import { AccountService, type AccountServiceDeps } from './service';
import { OAuthConnectService, type OAuthConnectServiceDeps } from './oauth';
export { accountNotFound } from './service';
export type { AccountMailAccess, AccountRow, AccountService } from './service';

export const createAccountModule = (deps: AccountServiceDeps) => new AccountService(deps);

export const createOAuthConnectModule = (deps: OAuthConnectServiceDeps) => new OAuthConnectService(deps);

export const createMailAccessModule = (deps: AccountMailAccessDeps) => new AccountMailAccess(deps);
