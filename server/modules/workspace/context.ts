/**
 * The calling workspace as services read it: its id and the two settings their rules need. Authentication reads
 * them with the key in its one database call, so no service looks them up again; a route hands them on with
 * `workspaceOf(auth)`, and no service sees the HTTP request's types. A service asks for the part it reads.
 */
export interface Workspace {
  id: string;
  /** The IANA zone the workspace's days are counted in (analytics ranges, sends today). */
  timezone: string;
  /** Whether it may register sub-users and manage plans. */
  whitelabelEnabled: boolean;
}

/** A workspace whose days a service counts: account views (sends today), analytics, the warm-up summary. */
export type ZonedWorkspace = Pick<Workspace, 'id' | 'timezone'>;

/** The workspace an authenticated request stands for. */
export function workspaceOf(auth: { workspaceId: string; timezone: string; whitelabelEnabled: boolean }): Workspace {
  return { id: auth.workspaceId, timezone: auth.timezone, whitelabelEnabled: auth.whitelabelEnabled };
}
