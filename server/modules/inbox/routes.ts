import { ok, route } from '../../http/route';
import type { InboxService } from './service';

export const inboxRoutes = ({ inbox }: { inbox: InboxService }) => [
  route('get', '/v2/email/list', async ({ auth, query }) =>
    ok('Emails retrieved', await inbox.list(auth.workspaceId, query)),
  ),
  route('get', '/v2/email/get', async ({ auth, query }) =>
    ok('Email retrieved', await inbox.get(auth.workspaceId, query.id)),
  ),
  route('post', '/v2/email/mark-read', async ({ auth, body }) => {
    const result = await inbox.markRead(auth.workspaceId, body.ids, body.read ?? true);
    const n = result.updated.length;
    return ok(`${n} ${n === 1 ? 'message' : 'messages'} marked ${result.read ? 'read' : 'unread'}`, result);
  }),
  route(
    'post',
    '/v2/email/reply',
    async ({ auth, body }) => {
      const result = await inbox.reply(auth.workspaceId, body);
      return ok(result.message.status === 'sent' ? 'Reply sent' : 'Reply not accepted by the SMTP server', result);
    },
    { status: 201 },
  ),
  route('post', '/v2/email/set-intent', async ({ auth, body }) =>
    ok('Intent set', await inbox.setIntent(auth.workspaceId, body)),
  ),
];
