import { paginated } from '../../http/pagination';
import { ok, route } from '../../http/route';
import { workspaceOf } from '../workspace';
import type { OAuthConnectService } from './oauth';
import type { AccountService } from './service';

export const accountRoutes = ({ accounts, oauth }: { accounts: AccountService; oauth: OAuthConnectService }) => [
  route(
    'post',
    '/v2/account/connect',
    async ({ auth, body }) => {
      const account = body.auth
        ? await oauth.connectGrant(workspaceOf(auth), { ...body, auth: body.auth })
        : await accounts.connect(auth.workspaceId, body);
      return ok('Email account connected', { account });
    },
    { status: 201 },
  ),
  route(
    'post',
    '/v2/account/oauth/start',
    async ({ auth, body }) => ok('OAuth connect started', await oauth.start(auth.workspaceId, body)),
    { status: 201 },
  ),
  route('get', '/v2/account/oauth/session', async ({ auth, query }) =>
    ok('OAuth connect flow retrieved', await oauth.session(workspaceOf(auth), query.sessionId)),
  ),
  route('post', '/v2/account/update', async ({ auth, body }) =>
    ok('Email account updated', { account: await accounts.update(workspaceOf(auth), body) }),
  ),
  route('post', '/v2/account/reconnect', async ({ auth, body }) =>
    ok('Email account logged in', { account: await accounts.reconnect(workspaceOf(auth), body) }),
  ),
  route('get', '/v1/account/list', async ({ auth, query }) =>
    ok('Email accounts retrieved', paginated(await accounts.list(workspaceOf(auth), query))),
  ),
  route('get', '/v1/account/status', async ({ auth, query }) =>
    ok('Email account status retrieved', await accounts.status(workspaceOf(auth), query.accountId)),
  ),
  route('post', '/v1/account/vitals', async ({ auth, body }) =>
    ok('Email account vitals checked', { items: await accounts.vitals(workspaceOf(auth), body) }),
  ),
  route('post', '/v1/account/warmup/enable', async ({ auth, body }) => {
    const result = await accounts.enableWarmup(workspaceOf(auth), body.accountId, body.warmup);
    return ok(result.changed ? 'Warm-up enabled' : 'Warm-up already enabled', result);
  }),
  route('post', '/v1/account/warmup/pause', async ({ auth, body }) => {
    const result = await accounts.pauseWarmup(workspaceOf(auth), body.accountId);
    return ok(result.changed ? 'Warm-up paused' : 'Warm-up already paused', result);
  }),
  route('delete', '/v1/account/delete', async ({ auth, query }) =>
    ok('Email account removed', await accounts.remove(auth.workspaceId, query.accountId)),
  ),
];
