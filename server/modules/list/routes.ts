import { paginated } from '../../http/pagination';
import { ok, route, STREAMED } from '../../http/route';
import { plural } from '../../text/plural';
import type { ListService } from './service';
import { writeExport } from './export';

export const listRoutes = ({ lists }: { lists: ListService }) => [
  route(
    'post',
    '/v2/list/create/people',
    async ({ auth, body }) => ok('List created', { list: await lists.create(auth.workspaceId, 'people', body.name) }),
    { status: 201 },
  ),
  route(
    'post',
    '/v2/list/create/company',
    async ({ auth, body }) => ok('List created', { list: await lists.create(auth.workspaceId, 'company', body.name) }),
    { status: 201 },
  ),
  route('post', '/v2/list/delete/people', async ({ auth, body }) =>
    ok('List deleted', await lists.delete(auth.workspaceId, 'people', body.listId)),
  ),
  route('post', '/v2/list/delete/company', async ({ auth, body }) =>
    ok('List deleted', await lists.delete(auth.workspaceId, 'company', body.listId)),
  ),
  route('get', '/v2/list/get', async ({ auth, query }) =>
    ok('List retrieved', { list: await lists.get(auth.workspaceId, query.listId) }),
  ),
  route('get', '/v2/list/all', async ({ auth, query }) =>
    ok('Lists retrieved', paginated(await lists.all(auth.workspaceId, query))),
  ),
  route('get', '/v2/list/leads', async ({ auth, query }) =>
    ok('List people retrieved', await lists.people(auth.workspaceId, query.listId, query)),
  ),
  route('get', '/v2/list/companies', async ({ auth, query }) =>
    ok('List companies retrieved', await lists.companies(auth.workspaceId, query.listId, query)),
  ),
  route('post', '/v2/list/add/leads', async ({ auth, body }) =>
    ok('Leads added to list', await lists.addMembers(auth.workspaceId, 'people', body.listId, body.personIds)),
  ),
  route('post', '/v2/list/add/companies', async ({ auth, body }) =>
    ok('Companies added to list', await lists.addMembers(auth.workspaceId, 'company', body.listId, body.companyIds)),
  ),
  route('post', '/v2/list/remove/leads', async ({ auth, body }) =>
    ok('Leads removed from list', await lists.removeMembers(auth.workspaceId, 'people', body.listId, body.personIds)),
  ),
  route('post', '/v2/list/remove/companies', async ({ auth, body }) =>
    ok(
      'Companies removed from list',
      await lists.removeMembers(auth.workspaceId, 'company', body.listId, body.companyIds),
    ),
  ),
  route('post', '/v2/list/send-to-campaign', async ({ auth, body }) => {
    const result = await lists.sendToCampaign(auth.workspaceId, body.listId, body.campaignId);
    const { added, duplicates, skippedNoEmail, invalid } = result.counts;
    return ok(
      `${plural(added, 'contact', 'contacts')} added, ${plural(duplicates, 'duplicate', 'duplicates')}, ${skippedNoEmail} without email, ${invalid} invalid`,
      result,
    );
  }),
  route('get', '/v2/list/export', async ({ auth, query, res }) => {
    const { list, batches } = await lists.openExport(auth.workspaceId, query.listId);
    await writeExport(res, list, batches, query.format ?? 'csv', (data) => ok('List exported', data));
    return STREAMED;
  }),
];
