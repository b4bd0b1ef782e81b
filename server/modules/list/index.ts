/** The list module's face: what other modules may use of it. */
import { ListService } from './service';
export type { ListService } from './service';

type ListServiceArgs = ConstructorParameters<typeof ListService>;
/** What ListService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface ListModuleDeps {
  db: ListServiceArgs[0];
  store: ListServiceArgs[1];
  leads: ListServiceArgs[2];
  contacts: ListServiceArgs[3];
  campaigns: ListServiceArgs[4];
  credits: ListServiceArgs[5];
  clock: ListServiceArgs[6];
}
export const createListModule = (d: ListModuleDeps) =>
  new ListService(d.db, d.store, d.leads, d.contacts, d.campaigns, d.credits, d.clock);
