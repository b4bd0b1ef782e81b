import { ok, route } from '../../http/route';
import { workspaceOf } from '../workspace';
import type { UsageService } from './service';

export const usageRoutes = ({ usage }: { usage: UsageService }) => [
  route('get', '/v2/usage', async ({ auth, quota }) =>
    ok('Usage retrieved', await usage.usage(workspaceOf(auth), quota)),
  ),
];
