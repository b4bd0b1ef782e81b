/** The contact module's face: what other modules may use of it. */
import { ContactLifecycle } from './lifecycle';
import { ContactService } from './service';
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
