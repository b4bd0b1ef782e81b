/** The contact module's face: what other modules may use of it. */
import { ContactBulk, type ContactBulkDeps } from './bulk';
import { ContactLifecycle, type ContactLifecycleDeps } from './lifecycle';
import { ContactListing, type ContactListingDeps } from './listing';
import { ContactService, type ContactServiceDeps } from './service';
export { MAX_CUSTOM_VARIABLES } from './service';
export type { ContactService, NewContact } from './service';
export { UNFINISHED_STATUSES } from './statuses';

export const createContactModule = (deps: ContactServiceDeps) => new ContactService(deps);

export const createContactLifecycleModule = (deps: ContactLifecycleDeps) => new ContactLifecycle(deps);

export type { ContactBulk, ContactBulkRequest } from './bulk';
export type { ContactListing } from './listing';
export const createContactListingModule = (deps: ContactListingDeps) => new ContactListing(deps);
export const createContactBulkModule = (deps: ContactBulkDeps) => new ContactBulk(deps);
