/** A campaign's figures: totals, unique contacts and the daily series, from the stored email events. */
import { useApi } from '../../api';

export const useCampaignSummary = (campaignId: string) =>
  useApi().useQuery('get', '/v2/analytics/campaign/summary', { params: { query: { campaignId } } });
