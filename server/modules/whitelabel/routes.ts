import { ok, route } from '../../http/route';
import { workspaceOf } from '../workspace';
import type { WhitelabelService } from './service';

export const whitelabelRoutes = ({ whitelabel }: { whitelabel: WhitelabelService }) => [
  route(
    'post',
    '/v2/whitelabel/register',
    async ({ auth, body }) => ok('Sub-user registered', await whitelabel.register(workspaceOf(auth), body)),
    {
      status: 201,
    },
  ),
  route(
    'post',
    '/v2/whitelabel/add-plan',
    async ({ auth, body }) => ok('Plan created', { plan: await whitelabel.createPlan(workspaceOf(auth), body) }),
    {
      status: 201,
    },
  ),
  route('get', '/v2/whitelabel/get-plan', async ({ auth, query }) =>
    ok('Plan retrieved', { plan: await whitelabel.getPlan(workspaceOf(auth), query.planId) }),
  ),
  route('post', '/v2/whitelabel/user/{subUserId}/assign-plan/{planId}', async ({ auth, params }) =>
    ok('Plan assigned', await whitelabel.assignPlan(workspaceOf(auth), params.subUserId, params.planId)),
  ),
  route('get', '/v2/whitelabel/user/{email}', async ({ auth, params }) =>
    ok('Sub-user retrieved', { subUser: await whitelabel.findSubUser(workspaceOf(auth), params.email) }),
  ),
];
