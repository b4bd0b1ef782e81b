/**
 * The event feed, followed with its cursor: the first pages catch up with what already happened, then the
 * feed is asked again every few seconds and each new event is handed to `onEvents` (which refreshes what it
 * touches), so sends and replies appear without a reload. Answers the last failure, if the feed is failing.
 */
import { useEffect, useRef, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';
import { useApi } from '../../api';

export type FeedEvent =
  paths['/v2/event/list']['get']['responses']['200']['content']['application/json']['data']['items'][number];

export function useEventFeed(onEvents: (events: FeedEvent[]) => void, intervalMs = 3000): unknown {
  const api = useApi();
  const queryClient = useQueryClient();
  const [failure, setFailure] = useState<unknown>(null);
  const handler = useRef(onEvents);
  useEffect(() => {
    handler.current = onEvents;
  });
  useEffect(() => {
    let after: string | undefined;
    let caughtUp = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const poll = async () => {
      try {
        for (let more = true; more && !stopped;) {
          const query = { limit: 100, ...(after ? { after } : {}) };
          const page = await queryClient.fetchQuery({
            ...api.queryOptions('get', '/v2/event/list', { params: { query } }),
            staleTime: 0,
            gcTime: 0,
          });
          const { items, pagination } = page.data;
          if (caughtUp && items.length) handler.current(items);
          if (items.length) after = pagination.nextCursor;
          more = pagination.hasMore;
        }
        caughtUp = true;
        setFailure(null);
      } catch (error) {
        setFailure(error);
      }
      if (!stopped) timer = setTimeout(() => void poll(), intervalMs);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [api, queryClient, intervalMs]);
  return failure;
}
