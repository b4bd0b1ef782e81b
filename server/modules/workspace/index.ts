/** The workspace module's face: what other modules may use of it. */
export { workspaceOf } from './context';
export type { Workspace, ZonedWorkspace } from './context';
export type { PlanRow, SubUserRow, WorkspaceService } from './service';
