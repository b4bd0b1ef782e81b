/** The workspace's own tracking domains (`/v2/tracking-domain/...`); the host they serve is the tracking module's. */
import { paginated } from '../../http/pagination';
import { ok, route } from '../../http/route';
import { pageOf } from '../../platform/paging';
import type { TrackingDomainService } from './service';

export const trackingDomainRoutes = ({ trackingDomains }: { trackingDomains: TrackingDomainService }) => [
  route(
    'post',
    '/v2/tracking-domain/create',
    async ({ auth, body }) =>
      ok('Tracking domain added', { trackingDomain: await trackingDomains.create(auth.workspaceId, body.domain) }),
    { status: 201 },
  ),
  route('get', '/v2/tracking-domain/list', async ({ auth, query }) =>
    ok('Tracking domains retrieved', paginated(await trackingDomains.list(auth.workspaceId, pageOf(query)))),
  ),
  route('get', '/v2/tracking-domain/get', async ({ auth, query }) =>
    ok('Tracking domain retrieved', { trackingDomain: await trackingDomains.get(auth.workspaceId, query.id) }),
  ),
  route('post', '/v2/tracking-domain/verify', async ({ auth, body }) =>
    ok('Tracking domain checked', { trackingDomain: await trackingDomains.verify(auth.workspaceId, body.id) }),
  ),
  route('post', '/v2/tracking-domain/delete', async ({ auth, body }) =>
    ok('Tracking domain removed', await trackingDomains.delete(auth.workspaceId, body.id)),
  ),
];
