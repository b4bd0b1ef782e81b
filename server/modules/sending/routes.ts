import { ok, route } from '../../http/route';
import type { CampaignService } from '../campaign/service';
import type { SendingService } from './service';

export const sendingRoutes = ({ campaigns, sending }: { campaigns: CampaignService; sending: SendingService }) => [
  route('get', '/v2/campaign/sending-status', async ({ auth, query }) => {
    const campaign = await campaigns.get(auth.workspaceId, query.campaignId);
    const status = await sending.sendingStatus(auth.workspaceId, campaign.id, {
      status: campaign.status,
      schedule: campaign.schedule && { ...campaign.schedule, startDate: campaign.schedule.startDate ?? null, endDate: campaign.schedule.endDate ?? null },
      dailyLimit: campaign.options.dailyLimit,
    });
    return ok('Sending status retrieved', status);
  }),
];
