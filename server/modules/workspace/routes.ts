import { ok, route } from '../../http/route';
import { paginated } from '../../http/pagination';
import { pageOf } from '../../platform/paging';
import { keyView, type KeyService } from './keys';

/** What the presented key resolved to (http/auth.ts): nothing to read beyond the request's own context. */
export const workspaceRoutes = () => [
  route('get', '/v1/authenticate', ({ auth }) =>
    Promise.resolve(
      ok('API key is valid', {
        workspace: { id: auth.workspaceId, name: auth.workspaceName },
        key: { scopes: auth.scopes },
      }),
    ),
  ),
  route('get', '/v1/ratelimit/limits', ({ auth }) =>
    Promise.resolve(ok('Rate limits retrieved', { limits: auth.limits })),
  ),
];

/** The workspace's own keys (`/v2/api-key/...`): the calling key (`auth`) is the caller of each. */
export const keyRoutes = ({ keys }: { keys: KeyService }) => [
  route('post', '/v2/api-key/create', async ({ auth, body }) => ok('API key created', await keys.create(auth, body))),
  route('get', '/v2/api-key/list', async ({ auth, query }) => {
    const { items, page, total } = await keys.list(auth.workspaceId, pageOf(query));
    return ok('API keys retrieved', paginated({ items: items.map(keyView), page, total }));
  }),
  route('post', '/v2/api-key/revoke', async ({ auth, body }) =>
    ok('API key revoked', { key: keyView(await keys.revoke(auth.workspaceId, body.id, auth)) }),
  ),
  route('post', '/v2/api-key/rotate', async ({ auth, body }) =>
    ok('API key rotated', await keys.rotate(auth, body.id, body.overlapSeconds)),
  ),
];
