import { ok, route } from '../../http/route';

export const authenticateRoutes = () => [
  route('get', '/v1/authenticate', async ({ auth }) =>
    ok('API key is valid', { workspace: { id: auth.workspaceId, name: auth.workspaceName } }),
  ),
];
