/**
 * Campaigns: the list; one campaign whole (status, sequence, subsequences, schedule, options, accounts); its
 * steps and variants written; launch, pause, duplicate and delete.
 */
import { useQueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export type CampaignListQuery = NonNullable<paths['/v2/campaign/list']['get']['parameters']['query']>;
export type CampaignDetail =
  paths['/v2/campaign/get']['get']['responses']['200']['content']['application/json']['data']['campaign'];
export type SequenceSteps =
  paths['/v2/campaign/sequence-create']['post']['requestBody']['content']['application/json']['steps'];
export type Schedule = paths['/v2/campaign/set/schedules']['post']['requestBody']['content']['application/json'];

export const useCampaigns = (query: CampaignListQuery) =>
  useApi().useQuery('get', '/v2/campaign/list', { params: { query } });

/** The campaign as it was written: what the campaign page shows and edits (nothing is asked without an id). */
export const useCampaign = (campaignId: string | undefined) =>
  useApi().useQuery(
    'get',
    '/v2/campaign/get',
    { params: { query: { campaignId: campaignId ?? '' } } },
    { enabled: Boolean(campaignId) },
  );

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
  return () => invalidate(queryClient, '/v2/campaign/list', '/v2/campaign/get', '/v2/campaign/preview');
}

export const useCreateCampaign = () =>
  useApi().useMutation('post', '/v2/campaign/create', { onSuccess: useCampaignsChanged() });

export const useAppendSteps = () =>
  useApi().useMutation('post', '/v2/campaign/sequence-create', { onSuccess: useCampaignsChanged() });

/** Changes a saved step's wait and the subject, body or weight of its variants. */
export const useUpdateStep = () =>
  useApi().useMutation('put', '/v2/campaign/sequences/{id}', { onSuccess: useCampaignsChanged() });

/** Adds variants to a saved step (lettered after the step's own). */
export const useAddVariants = () =>
  useApi().useMutation('post', '/v2/campaign/variants-create', { onSuccess: useCampaignsChanged() });

export const useSetSchedule = () =>
  useApi().useMutation('post', '/v2/campaign/set/schedules', { onSuccess: useCampaignsChanged() });

export const useSetCampaignAccounts = () =>
  useApi().useMutation('post', '/v2/campaign/set/accounts', { onSuccess: useCampaignsChanged() });

export const useLaunchCampaign = () =>
  useApi().useMutation('post', '/v2/campaign/launch', { onSuccess: useCampaignsChanged() });

export const usePauseCampaign = () =>
  useApi().useMutation('post', '/v2/campaign/pause', { onSuccess: useCampaignsChanged() });

export const useDuplicateCampaign = () =>
  useApi().useMutation('post', '/v2/campaign/duplicate', { onSuccess: useCampaignsChanged() });

/** Deletes a campaign; only the list is asked again (the campaign's own reads would answer 404 from now on). */
export const useDeleteCampaign = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/campaign/delete', {
    onSuccess: () => invalidate(queryClient, '/v2/campaign/list'),
  });
};
