/** The contact module's face: what other modules may use of it. */
export { MAX_CUSTOM_VARIABLES } from './service';
export type { ContactService, NewContact } from './service';
export { UNFINISHED_STATUSES } from './statuses';
