import { ok, route } from '../../http/route';
import type { CampaignService } from './service';
import type { SubsequenceService } from './subsequences';
import { paginated } from '../../http/pagination';
import { pageOf } from '../../platform/paging';

export const campaignRoutes = ({ campaigns }: { campaigns: CampaignService }) => [
  route('get', '/v1/campaign/list', async ({ auth, query }) =>
    ok(
      'Campaigns retrieved',
      paginated(await campaigns.list(auth.workspaceId, { ...pageOf(query), status: query.status })),
    ),
  ),
  route('get', '/v1/campaign/get/name', async ({ auth, query }) => {
    const { id, name } = await campaigns.get(auth.workspaceId, query.campaignId);
    return ok('Campaign name retrieved', { id, name });
  }),
  route('get', '/v1/campaign/get/status', async ({ auth, query }) => {
    const { id, status, pauseReason, launchedAt } = await campaigns.get(auth.workspaceId, query.campaignId);
    return ok('Campaign status retrieved', { id, status, pauseReason, launchedAt });
  }),
  route('get', '/v1/campaign/get/accounts', async ({ auth, query }) => {
    const { campaignId, ...page } = await campaigns.listAccounts(auth.workspaceId, query.campaignId, pageOf(query));
    return ok('Campaign accounts retrieved', { campaignId, ...paginated(page) });
  }),
  route('post', '/v1/campaign/set/name', async ({ auth, body }) =>
    ok('Campaign name updated', { campaign: await campaigns.setName(auth.workspaceId, body.campaignId, body.name) }),
  ),
  route('post', '/v1/campaign/set/accounts', async ({ auth, body }) =>
    ok('Campaign accounts set', await campaigns.setAccounts(auth.workspaceId, body.campaignId, body.accountIds)),
  ),
  route('post', '/v1/campaign/add/account', async ({ auth, body }) =>
    ok(
      'Email account added to campaign',
      await campaigns.addAccount(auth.workspaceId, body.campaignId, body.accountId),
    ),
  ),
  route('post', '/v1/campaign/remove/accounts', async ({ auth, body }) =>
    ok(
      'Email accounts removed from campaign',
      await campaigns.removeAccounts(auth.workspaceId, body.campaignId, body.accountIds),
    ),
  ),
  route(
    'post',
    '/v2/campaign/create',
    async ({ auth, body }) => ok('Campaign created', { campaign: await campaigns.create(auth.workspaceId, body) }),
    {
      status: 201,
    },
  ),
  route(
    'post',
    '/v2/campaign/sequence-create',
    async ({ auth, body }) =>
      ok('Sequence steps created', await campaigns.createSteps(auth.workspaceId, body.campaignId, body.steps)),
    { status: 201 },
  ),
  route('put', '/v2/campaign/sequences/{id}', async ({ auth, params, body }) =>
    ok('Sequence step updated', await campaigns.updateStep(auth.workspaceId, params.id, body)),
  ),
  route('delete', '/v2/campaign/sequences-delete', async ({ auth, query }) =>
    ok('Sequence step deleted', await campaigns.deleteStep(auth.workspaceId, query.stepId)),
  ),
  route(
    'post',
    '/v2/campaign/variants-create',
    async ({ auth, body }) =>
      ok('Variants created', await campaigns.createVariants(auth.workspaceId, body.stepId, body.variants)),
    { status: 201 },
  ),
  route('delete', '/v2/campaign/variants-delete', async ({ auth, query }) =>
    ok('Variant deleted', await campaigns.deleteVariant(auth.workspaceId, query.variantId)),
  ),
  route('post', '/v2/campaign/set/schedules', async ({ auth, body }) =>
    ok('Campaign schedule updated', {
      campaign: await campaigns.setSchedule(auth.workspaceId, body.campaignId, body.schedule, body.options),
    }),
  ),
  route('get', '/v2/campaign/get', async ({ auth, query }) =>
    ok('Campaign retrieved', { campaign: await campaigns.getDetail(auth.workspaceId, query.campaignId) }),
  ),
  route(
    'post',
    '/v2/campaign/duplicate',
    async ({ auth, body }) =>
      ok('Campaign duplicated', { campaign: await campaigns.duplicate(auth.workspaceId, body.campaignId, body.name) }),
    { status: 201 },
  ),
  route('post', '/v2/campaign/delete', async ({ auth, body }) =>
    ok('Campaign deleted', await campaigns.delete(auth.workspaceId, body.campaignId)),
  ),
  route('post', '/v2/campaign/launch', async ({ auth, body }) =>
    ok('Campaign launched', { campaign: await campaigns.launch(auth.workspaceId, body.campaignId) }),
  ),
  route('post', '/v2/campaign/pause', async ({ auth, body }) =>
    ok('Campaign paused', { campaign: await campaigns.pause(auth.workspaceId, body.campaignId) }),
  ),
];

export const subsequenceRoutes = ({ subsequences }: { subsequences: SubsequenceService }) => [
  route(
    'post',
    '/v2/subsequence/create',
    async ({ auth, body }) =>
      ok('Subsequence created', { subsequence: await subsequences.create(auth.workspaceId, body) }),
    { status: 201 },
  ),
  route('get', '/v2/subsequence/list', async ({ auth, query }) =>
    ok('Subsequences retrieved', {
      campaignId: query.campaignId,
      ...paginated(await subsequences.list(auth.workspaceId, query.campaignId, pageOf(query))),
    }),
  ),
  route('get', '/v2/subsequence/get', async ({ auth, query }) =>
    ok('Subsequence retrieved', { subsequence: await subsequences.get(auth.workspaceId, query.subsequenceId) }),
  ),
  route('post', '/v2/subsequence/update', async ({ auth, body }) =>
    ok('Subsequence updated', { subsequence: await subsequences.update(auth.workspaceId, body) }),
  ),
  route('delete', '/v2/subsequence/delete', async ({ auth, query }) =>
    ok('Subsequence deleted', await subsequences.delete(auth.workspaceId, query.subsequenceId, query.moveContactsTo)),
  ),
  route('post', '/v2/subsequence/pause', async ({ auth, body }) =>
    ok('Subsequence paused', {
      subsequence: await subsequences.setStatus(auth.workspaceId, body.subsequenceId, 'paused'),
    }),
  ),
  route('post', '/v2/subsequence/resume', async ({ auth, body }) =>
    ok('Subsequence resumed', {
      subsequence: await subsequences.setStatus(auth.workspaceId, body.subsequenceId, 'active'),
    }),
  ),
];
