import { ok, route } from '../../http/route';
import { plural } from '../../text/plural';
import type { VerificationService } from './service';

export const verificationRoutes = ({ verification }: { verification: VerificationService }) => [
  route('post', '/v1/people_verification/verify', async ({ body }) => {
    const data = await verification.verify(body.emails);
    return ok(`${plural(data.results.length, 'address', 'addresses')} verified`, data);
  }),
];
