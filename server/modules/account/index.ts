/** The account module's face: what other modules may use of it. */
export { accountNotFound } from './service';
export type { AccountMailAccess, AccountRow, AccountService } from './service';
