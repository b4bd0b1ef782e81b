import type { Request } from 'express';
import { ok, route, STREAMED } from '../../http/route';
import { plural } from '../../text/plural';
import type { JobService } from './service';
import { writeResults } from './results';

const accepted = { status: 202 } as const;
const isCsv = (req: Request) => Boolean(req.is('text/csv'));
const queued = (what: string, job: { progress: { total: number } }) =>
  `${what} job queued with ${plural(job.progress.total, 'row', 'rows')}`;

export const jobRoutes = ({ jobs }: { jobs: JobService }) => [
  route(
    'post',
    '/v2/job/contact-import',
    async ({ auth, query, body, req, upload }) => {
      // Options from the query; a JSON body's own values win.
      const options = {
        skipInWorkspace: body?.skipInWorkspace ?? query.skipInWorkspace ?? false,
        skipInAnyList: body?.skipInAnyList ?? query.skipInAnyList ?? false,
        skipSuppressed: body?.skipSuppressed ?? query.skipSuppressed ?? true,
        verify: body?.verify ?? query.verify ?? false,
      };
      const job = isCsv(req)
        ? await jobs.importCsv(
            auth.workspaceId,
            { campaignId: query.campaignId, listId: query.listId },
            options,
            upload,
          )
        : await jobs.importJson(
            auth.workspaceId,
            { campaignId: body.campaignId, listId: body.listId },
            options,
            body.contacts,
          );
      return ok(queued('Import', job), { job });
    },
    accepted,
  ),
  route(
    'post',
    '/v2/job/verify',
    async ({ auth, body, req, upload }) => {
      const job = isCsv(req)
        ? await jobs.verifyCsv(auth.workspaceId, upload)
        : await jobs.verifyEmails(auth.workspaceId, body.emails);
      return ok(queued('Verification', job), { job });
    },
    accepted,
  ),
  route(
    'post',
    '/v2/job/enrich',
    async ({ auth, body }) => {
      const job = await jobs.enrich(auth.workspaceId, body.people, body.dataOptions ?? ['workEmailReveal']);
      return ok(queued('Enrichment', job), { job });
    },
    accepted,
  ),
  route('get', '/v2/job/get', async ({ auth, query }) =>
    ok('Job retrieved', { job: await jobs.get(auth.workspaceId, query.jobId) }),
  ),
  route('get', '/v2/job/list', async ({ auth, query }) => {
    const data = await jobs.list(auth.workspaceId, query);
    return ok(plural(data.pagination.total, 'job', 'jobs'), data);
  }),
  route('post', '/v2/job/cancel', async ({ auth, body }) =>
    ok('Job cancelled', { job: await jobs.cancel(auth.workspaceId, body.jobId) }),
  ),
  route('get', '/v2/job/results', async ({ auth, query, res }) => {
    const { job, pages } = await jobs.openResults(auth.workspaceId, query.jobId);
    await writeResults(res, job, pages);
    return STREAMED;
  }),
];
