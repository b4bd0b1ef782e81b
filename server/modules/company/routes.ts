import { ok, route } from '../../http/route';
import type { Services } from '../../services';

export const companyRoutes = ({ leads }: Services) => [
  route('post', '/v1/company/find', async ({ auth, body }) => ok('Companies found', await leads.findCompanies(auth.workspaceId, body))),
];
