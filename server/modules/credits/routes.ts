import { defaulted } from '../../platform/paging';
import { ok, route } from '../../http/route';
import type { CreditService } from './service';

export const creditRoutes = ({ credits }: { credits: CreditService }) => [
  route('get', '/v2/credits/ledger', async ({ auth, query }) =>
    ok(
      'Credit ledger retrieved',
      await credits.ledger(auth.workspaceId, { cursor: query.cursor, limit: defaulted(query.limit, 'limit') }),
    ),
  ),
];
