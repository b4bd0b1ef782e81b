import { ok, route } from '../../http/route';
import { workspaceOf } from '../workspace';
import type { WarmupService } from './service';

/** The warm-up summary lives under analytics in the spec; its figures are the pool's, so the pool serves it. */
export const warmupRoutes = ({ warmup }: { warmup: WarmupService }) => [
  route('get', '/v1/analytics/account/warmup/summary', async ({ auth, query }) =>
    ok('Warm-up summary retrieved', await warmup.summary(workspaceOf(auth), query)),
  ),
];
