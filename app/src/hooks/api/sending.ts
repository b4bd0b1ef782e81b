/** The workspace's sending settings: the cap per recipient domain and the bounce protection of accounts and campaigns. */
import { useQueryClient } from '@tanstack/react-query';
import type { components } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export type SendingSettingsValues = components['schemas']['SendingSettings'];

export const useSendingSettings = () => useApi().useQuery('get', '/v2/sending/settings');

export const useUpdateSendingSettings = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/sending/settings', {
    onSuccess: () => invalidate(queryClient, '/v2/sending/settings'),
  });
};
