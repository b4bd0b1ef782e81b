import { ok, route } from '../../http/route';
import { pageOf, paginated } from '../../http/pagination';
import { keyView, type KeyService } from './keys';

/** The workspace's own keys (`/v2/api-key/...`): the caller's workspace and scopes come with its key. */
export const keyRoutes = ({ keys }: { keys: KeyService }) => [
  route('post', '/v2/api-key/create', async ({ auth, body }) =>
    ok('API key created', await keys.create({ workspaceId: auth.workspaceId, scopes: auth.scopes }, body)),
  ),
  route('get', '/v2/api-key/list', async ({ auth, query }) => {
    const page = pageOf(query);
    const { rows, total } = await keys.list(auth.workspaceId, page);
    return ok('API keys retrieved', paginated(rows.map(keyView), page, total));
  }),
  route('post', '/v2/api-key/revoke', async ({ auth, body }) =>
    ok('API key revoked', { key: keyView(await keys.revoke(auth.workspaceId, body.id, { fromApi: true })) }),
  ),
  route('post', '/v2/api-key/rotate', async ({ auth, body }) =>
    ok('API key rotated', await keys.rotate(auth.workspaceId, body.id, body.overlapSeconds)),
  ),
];
