import { ok, route } from '../../http/route';
import type { CampaignService } from '../campaign';
import type { SendingService } from './service';

export const sendingRoutes = ({ campaigns, sending }: { campaigns: CampaignService; sending: SendingService }) => [
  route('get', '/v2/campaign/sending-status', async ({ auth, query }) => {
    const campaign = await campaigns.sendingView(auth.workspaceId, query.campaignId);
    return ok('Sending status retrieved', await sending.sendingStatus(campaign));
  }),
  route('get', '/v2/campaign/preview', async ({ auth, query }) => {
    const campaign = await campaigns.sendingView(auth.workspaceId, query.campaignId);
    return ok('Preview rendered', await sending.preview(auth.workspaceId, campaign, query.contactId));
  }),
  route('get', '/v2/sending/settings', async ({ auth }) =>
    ok('Sending settings retrieved', { settings: await sending.settings(auth.workspaceId) }),
  ),
  route('post', '/v2/sending/settings', async ({ auth, body }) =>
    ok('Sending settings changed', { settings: await sending.updateSettings(auth.workspaceId, body) }),
  ),
];
