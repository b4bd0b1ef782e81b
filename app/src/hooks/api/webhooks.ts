/** Webhook subscriptions: the list, creating one (its secret answered once), a test event, resuming, deleting, and each one's delivery log. */
import { useQueryClient } from '@tanstack/react-query';
import type { components } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export type EventType = components['schemas']['EventType'];
export type Webhook = components['schemas']['WebhookSubscription'];

export const useWebhooks = () => useApi().useQuery('get', '/v2/webhook/list', { params: { query: { limit: 100 } } });

function useWebhooksChanged() {
  const queryClient = useQueryClient();
  return () => invalidate(queryClient, '/v2/webhook/list', '/v2/webhook/deliveries');
}

export const useCreateWebhook = () =>
  useApi().useMutation('post', '/v2/webhook/create', { onSuccess: useWebhooksChanged() });

export const useDeleteWebhook = () =>
  useApi().useMutation('post', '/v2/webhook/delete', { onSuccess: useWebhooksChanged() });

export const useResumeWebhook = () =>
  useApi().useMutation('post', '/v2/webhook/resume', { onSuccess: useWebhooksChanged() });

/** Sends one signed test event now and answers what the URL answered (not queued, not logged). */
export const useTestWebhook = () => useApi().useMutation('post', '/v2/webhook/test');

export const useDeliveries = (id: string, skip: number) =>
  useApi().useQuery('get', '/v2/webhook/deliveries', { params: { query: { id, limit: 20, skip } } });

export const useRetryDelivery = () =>
  useApi().useMutation('post', '/v2/webhook/retry', { onSuccess: useWebhooksChanged() });
