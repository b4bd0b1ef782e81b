import { defaulted } from '../../platform/paging';
import { ok, route } from '../../http/route';
import type { AuditService } from './service';

export const auditRoutes = ({ audit }: { audit: AuditService }) => [
  route('get', '/v2/audit/list', async ({ auth, query }) =>
    ok(
      'Audit entries retrieved',
      await audit.list(
        auth.workspaceId,
        {
          keyId: query.keyId,
          operation: query.operation,
          targetId: query.targetId,
          from: query.from ? new Date(query.from) : undefined,
          to: query.to ? new Date(query.to) : undefined,
          cursor: query.cursor,
        },
        defaulted(query.limit, 'limit'),
      ),
    ),
  ),
];
