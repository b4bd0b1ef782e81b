import { ok, route } from '../../http/route';
import type { Services } from '../../services';

export const mixedPeopleRoutes = ({ leads }: Services) => [
  route('post', '/v1/mixed_people/search', async ({ auth, body }) => ok('People found', await leads.searchPeople(auth.workspaceId, body))),
];
