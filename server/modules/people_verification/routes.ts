import { ok, route } from '../../http/route';
import type { Services } from '../../services';

export const peopleVerificationRoutes = (services: Services) => [
  route('post', '/v1/people_verification/verify', async ({ body }) => {
    const data = await services.verification.verify(body.emails);
    return ok(`${data.results.length} ${data.results.length === 1 ? 'address' : 'addresses'} verified`, data);
  }),
];
