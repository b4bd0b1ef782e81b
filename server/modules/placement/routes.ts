import { ok, route } from '../../http/route';
import { plural } from '../../text/plural';
import type { PlacementService } from './service';

export const placementRoutes = ({ placement }: { placement: PlacementService }) => [
  route(
    'post',
    '/v2/placement/create',
    async ({ auth, body }) => {
      const test = await placement.create(auth.workspaceId, body);
      return ok(`Placement test started with ${plural(test.recipientCount, 'recipient', 'recipients')}`, { test });
    },
    { status: 201 },
  ),
  route('get', '/v2/placement/get', async ({ auth, query }) =>
    ok('Placement test retrieved', { test: await placement.get(auth.workspaceId, query.id) }),
  ),
  route('get', '/v2/placement/list', async ({ auth, query }) => {
    const data = await placement.list(auth.workspaceId, query);
    return ok(plural(data.pagination.total, 'placement test', 'placement tests'), data);
  }),
];
