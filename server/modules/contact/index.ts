/** The contact module's face: what other modules may use of it. */
import { ContactLifecycle, type ContactLifecycleDeps } from './lifecycle';
import { ContactService, type ContactServiceDeps } from './service';
export { MAX_CUSTOM_VARIABLES } from './service';
export type { ContactService, NewContact } from './service';
export { UNFINISHED_STATUSES } from './statuses';

export const createContactModule = (deps: ContactServiceDeps) => new ContactService(deps);

export const createContactLifecycleModule = (deps: ContactLifecycleDeps) => new ContactLifecycle(deps);
