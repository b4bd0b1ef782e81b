/** Campaigns: the list, one campaign's status, its sequence, schedule and accounts, launch and pause. */
import { useQueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export type CampaignListQuery = NonNullable<paths['/v2/campaign/list']['get']['parameters']['query']>;
export type CampaignItem =
  paths['/v2/campaign/list']['get']['responses']['200']['content']['application/json']['data']['items'][number];
export type SequenceSteps =
  paths['/v2/campaign/sequence-create']['post']['requestBody']['content']['application/json']['steps'];
export type Schedule = paths['/v2/campaign/set/schedules']['post']['requestBody']['content']['application/json'];

export const useCampaigns = (query: CampaignListQuery) =>
  useApi().useQuery('get', '/v2/campaign/list', { params: { query } });

export const useCampaignName = (campaignId: string) =>
  useApi().useQuery('get', '/v2/campaign/get/name', { params: { query: { campaignId } } });

export const useCampaignStatus = (campaignId: string) =>
  useApi().useQuery('get', '/v2/campaign/get/status', { params: { query: { campaignId } } });

export const useCampaignAccounts = (campaignId: string) =>
  useApi().useQuery('get', '/v2/campaign/get/accounts', { params: { query: { campaignId, limit: 100 } } });

/** The message a contact gets next, rendered by the sending engine (spintax, variables), with when and why. */
export const useCampaignPreview = (campaignId: string, contactId: string | undefined) =>
  useApi().useQuery(
    'get',
    '/v2/campaign/preview',
    { params: { query: { campaignId, contactId: contactId ?? '' } } },
    { enabled: Boolean(contactId) },
  );

/** After a change, every read of campaigns is asked again. */
function useCampaignsChanged() {
  const queryClient = useQueryClient();
  return () =>
    invalidate(
      queryClient,
      '/v2/campaign/list',
      '/v2/campaign/get/name',
      '/v2/campaign/get/status',
      '/v2/campaign/get/accounts',
      '/v2/campaign/preview',
    );
}

export const useCreateCampaign = () =>
  useApi().useMutation('post', '/v2/campaign/create', { onSuccess: useCampaignsChanged() });

export const useAppendSteps = () =>
  useApi().useMutation('post', '/v2/campaign/sequence-create', { onSuccess: useCampaignsChanged() });

export const useSetSchedule = () =>
  useApi().useMutation('post', '/v2/campaign/set/schedules', { onSuccess: useCampaignsChanged() });

export const useSetCampaignAccounts = () =>
  useApi().useMutation('post', '/v2/campaign/set/accounts', { onSuccess: useCampaignsChanged() });

export const useLaunchCampaign = () =>
  useApi().useMutation('post', '/v2/campaign/launch', { onSuccess: useCampaignsChanged() });

export const usePauseCampaign = () =>
  useApi().useMutation('post', '/v2/campaign/pause', { onSuccess: useCampaignsChanged() });
