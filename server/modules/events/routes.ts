import { ok, route } from '../../http/route';
import { defaulted } from '../../platform/paging';
import type { EventService } from './service';

export const eventRoutes = ({ events }: { events: EventService }) => [
  route('get', '/v2/event/list', async ({ auth, query }) => {
    const page = await events.feed(auth.workspaceId, { ...query, limit: defaulted(query.limit, 'limit') });
    return ok(`${page.items.length} ${page.items.length === 1 ? 'event' : 'events'}`, page);
  }),
];
