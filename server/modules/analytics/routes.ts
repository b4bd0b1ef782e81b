import { paginated } from '../../http/pagination';
import { ok, route } from '../../http/route';
import { workspaceOf } from '../workspace';
import type { AnalyticsService } from './service';

export const analyticsRoutes = ({ analytics }: { analytics: AnalyticsService }) => [
  route('get', '/v1/analytics/campaign/summary', async ({ auth, query }) =>
    ok('Campaign analytics retrieved', await analytics.campaignSummary(workspaceOf(auth), query)),
  ),
  route('get', '/v2/analytics/campaign/steps', async ({ auth, query }) =>
    ok('Step analytics retrieved', await analytics.campaignSteps(workspaceOf(auth), query)),
  ),
  route('get', '/v1/analytics/campaign/count', async ({ auth, query }) =>
    ok('Campaign counts retrieved', await analytics.campaignCounts(auth.workspaceId, query)),
  ),
  route('get', '/v1/analytics/account/campaign/count', async ({ auth, query }) => {
    const { date, timezone, ...page } = await analytics.sentToday(workspaceOf(auth), query);
    return ok('Emails sent today retrieved', { date, timezone, ...paginated(page) });
  }),
];
