import { ok, route } from '../../http/route';
import type { Services } from '../../services';
import { enrichmentMessage } from '../people_enrichment/routes';

/** The v2 batch form of peopleEnrichment: the same service, up to 100 inputs (the spec bounds it). */
export const enrichRoutes = ({ enrichment }: Services) => [
  route('post', '/v2/enrich/by-details', async ({ auth, body }) => {
    const data = await enrichment.enrich(auth.workspaceId, body.people, body.dataOptions);
    return ok(enrichmentMessage(data), data);
  }),
];
