/** The contact module's face: what other modules may use of it. */
import type { Db } from '../../db';
import type { CampaignService } from '../campaign';
import { ContactBulk } from './bulk';
import { ContactLifecycle } from './lifecycle';
import { ContactListing } from './listing';
import { ContactService } from './service';
import type { ContactStore } from './store';
export { MAX_CUSTOM_VARIABLES } from './service';
export type { ContactService, NewContact } from './service';
export { UNFINISHED_STATUSES } from './statuses';

type ContactServiceArgs = ConstructorParameters<typeof ContactService>;
/** What ContactService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface ContactModuleDeps {
  db: ContactServiceArgs[0];
  store: ContactServiceArgs[1];
  events: ContactServiceArgs[2];
  workspaces: ContactServiceArgs[3];
  campaigns: ContactServiceArgs[4];
  progress: ContactServiceArgs[5];
  clock: ContactServiceArgs[6];
  triggers: ContactServiceArgs[7];
}
export const createContactModule = (d: ContactModuleDeps) =>
  new ContactService(d.db, d.store, d.events, d.workspaces, d.campaigns, d.progress, d.clock, d.triggers);

type ContactLifecycleArgs = ConstructorParameters<typeof ContactLifecycle>;
/** What ContactLifecycle is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface ContactLifecycleModuleDeps {
  db: ContactLifecycleArgs[0];
  store: ContactLifecycleArgs[1];
  campaigns: ContactLifecycleArgs[2];
  progress: ContactLifecycleArgs[3];
  clock: ContactLifecycleArgs[4];
}
export const createContactLifecycleModule = (d: ContactLifecycleModuleDeps) =>
  new ContactLifecycle(d.db, d.store, d.campaigns, d.progress, d.clock);

export type { ContactBulk, ContactBulkRequest } from './bulk';
export type { ContactListing } from './listing';

/** The contact list's query, by name. */
export const createContactListingModule = (d: { db: Db; store: ContactStore; campaigns: CampaignService }) =>
  new ContactListing(d.db, d.store, d.campaigns);

/** Bulk actions over a filter's contacts, by name. */
export const createContactBulkModule = (d: {
  db: Db;
  listing: ContactListing;
  contacts: ContactService;
  lifecycle: ContactLifecycle;
  campaigns: CampaignService;
}) => new ContactBulk(d.db, d.listing, d.contacts, d.lifecycle, d.campaigns);
