import { ok, route } from '../../http/route';
import type { WebhookService } from './service';
import { paginated } from '../../http/pagination';
import { pageOf } from '../../platform/paging';

export const webhookRoutes = ({ webhooks }: { webhooks: WebhookService }) => [
  route(
    'post',
    '/v2/webhook/create',
    async ({ auth, body }) => ok('Webhook subscription created', await webhooks.create(auth.workspaceId, body)),
    { status: 201 },
  ),
  route('get', '/v2/webhook/list', async ({ auth, query }) =>
    ok('Webhook subscriptions retrieved', paginated(await webhooks.list(auth.workspaceId, pageOf(query)))),
  ),
  route('get', '/v2/webhook/get', async ({ auth, query }) =>
    ok('Webhook subscription retrieved', await webhooks.get(auth.workspaceId, query.id)),
  ),
  route('post', '/v2/webhook/update', async ({ auth, body }) =>
    ok('Webhook subscription updated', await webhooks.update(auth.workspaceId, body)),
  ),
  route('post', '/v2/webhook/delete', async ({ auth, body }) =>
    ok('Webhook subscription deleted', await webhooks.delete(auth.workspaceId, body.id)),
  ),
  route('post', '/v2/webhook/test', async ({ auth, body }) =>
    ok('Test event sent', await webhooks.test(auth.workspaceId, body.id)),
  ),
  route('post', '/v2/webhook/resume', async ({ auth, body }) =>
    ok('Webhook subscription resumed', await webhooks.resume(auth.workspaceId, body.id)),
  ),
  route('post', '/v2/webhook/rotate-secret', async ({ auth, body }) =>
    ok('Webhook secret rotated', await webhooks.rotateSecret(auth.workspaceId, body.id)),
  ),
  route('get', '/v2/webhook/deliveries', async ({ auth, query }) =>
    ok('Webhook deliveries retrieved', paginated(await webhooks.deliveries(auth.workspaceId, query.id, pageOf(query)))),
  ),
  route('post', '/v2/webhook/retry', async ({ auth, body }) =>
    ok('Webhook delivery queued', await webhooks.retry(auth.workspaceId, body.deliveryId)),
  ),
];
