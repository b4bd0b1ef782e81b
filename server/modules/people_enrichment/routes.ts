import { ok, route } from '../../http/route';
import type { Services } from '../../services';

/** "1 of 2 people matched". */
export const enrichmentMessage = ({ summary }: { summary: { total: number; matched: number } }) =>
  `${summary.matched} of ${summary.total} ${summary.total === 1 ? 'person' : 'people'} matched`;

export const peopleEnrichmentRoutes = ({ enrichment }: Services) => [
  route('post', '/v1/people_enrichment/peopleEnrichment', async ({ auth, body }) => {
    const data = await enrichment.enrich(auth.workspaceId, body.people, body.dataOptions);
    return ok(enrichmentMessage(data), data);
  }),
];
