/** The workspace module's face: what other modules may use of it. */
import { KeyService, type KeyServiceDeps } from './keys';
import { WorkspaceService, type WorkspaceServiceDeps } from './service';
export { workspaceOf } from './context';
export type { Workspace, ZonedWorkspace } from './context';
export type { PlanRow, SubUserRow, WorkspaceService } from './service';

export const createWorkspaceModule = (deps: WorkspaceServiceDeps) => new WorkspaceService(deps);

export const createKeyModule = (deps: KeyServiceDeps) => new KeyService(deps);
