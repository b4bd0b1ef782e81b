/** The workspace module's face: what other modules may use of it. */
import { KeyService } from './keys';
import { WorkspaceService } from './service';
export { workspaceOf } from './context';
export type { Workspace, ZonedWorkspace } from './context';
export type { PlanRow, SubUserRow, WorkspaceService } from './service';

type WorkspaceServiceArgs = ConstructorParameters<typeof WorkspaceService>;
/** What WorkspaceService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface WorkspaceModuleDeps {
  db: WorkspaceServiceArgs[0];
  store: WorkspaceServiceArgs[1];
  credits: WorkspaceServiceArgs[2];
  keys: WorkspaceServiceArgs[3];
  clock: WorkspaceServiceArgs[4];
  audit: WorkspaceServiceArgs[5];
}
export const createWorkspaceModule = (d: WorkspaceModuleDeps) =>
  new WorkspaceService(d.db, d.store, d.credits, d.keys, d.clock, d.audit);

type KeyServiceArgs = ConstructorParameters<typeof KeyService>;
/** What KeyService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface KeyModuleDeps {
  db: KeyServiceArgs[0];
  store: KeyServiceArgs[1];
  clock: KeyServiceArgs[2];
  known: KeyServiceArgs[3];
  audit: KeyServiceArgs[4];
}
export const createKeyModule = (d: KeyModuleDeps) => new KeyService(d.db, d.store, d.clock, d.known, d.audit);
