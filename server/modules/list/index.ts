/** The list module's face: what other modules may use of it. */
import { ListService, type ListServiceDeps } from './service';
export type { ListService } from './service';

export const createListModule = (deps: ListServiceDeps) => new ListService(deps);
