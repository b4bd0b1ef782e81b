import { ok, route } from '../../http/route';
import type { VerificationService } from './service';

export const verificationRoutes = ({ verification }: { verification: VerificationService }) => [
  route('post', '/v1/people_verification/verify', async ({ body }) => {
    const data = await verification.verify(body.emails);
    return ok(`${data.results.length} ${data.results.length === 1 ? 'address' : 'addresses'} verified`, data);
  }),
];
