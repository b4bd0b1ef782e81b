import { ok, route } from '../../http/route';

export const ratelimitRoutes = () => [
  route('get', '/v1/ratelimit/limits', async ({ auth }) => ok('Rate limits retrieved', { limits: auth.limits })),
];
