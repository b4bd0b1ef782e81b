import { ok, route } from '../../http/route';

/** What the presented key resolved to (http/auth.ts): nothing to read beyond the request's own context. */
export const workspaceRoutes = () => [
  route('get', '/v1/authenticate', ({ auth }) =>
    Promise.resolve(ok('API key is valid', { workspace: { id: auth.workspaceId, name: auth.workspaceName } })),
  ),
  route('get', '/v1/ratelimit/limits', ({ auth }) =>
    Promise.resolve(ok('Rate limits retrieved', { limits: auth.limits })),
  ),
];
