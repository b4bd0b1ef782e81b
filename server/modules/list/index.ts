/** The list module's face: what other modules may use of it. */
export type { ListService } from './service';
