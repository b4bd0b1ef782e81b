import { ok, route } from '../../http/route';
import type { SuppressionService } from './service';
import { paginated } from '../../http/pagination';
import { pageOf } from '../../platform/paging';

export const suppressionRoutes = ({ suppression }: { suppression: SuppressionService }) => [
  route('post', '/v2/suppression/add', async ({ auth, body }) =>
    ok('Suppression entries added', await suppression.add(auth.workspaceId, body.values)),
  ),
  route('get', '/v2/suppression/list', async ({ auth, query }) =>
    ok(
      'Suppression list retrieved',
      paginated(await suppression.list(auth.workspaceId, { ...pageOf(query), search: query.search })),
    ),
  ),
  route('post', '/v2/suppression/remove', async ({ auth, body }) =>
    ok('Suppression entries removed', await suppression.remove(auth.workspaceId, body.values)),
  ),
];
