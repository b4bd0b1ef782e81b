import { ok, route } from '../../http/route';
import type { EnrichmentService } from './enrichment';
import type { LeadService } from './service';

/** "1 of 2 people matched". */
const enrichmentMessage = ({ summary }: { summary: { total: number; matched: number } }) =>
  `${summary.matched} of ${summary.total} ${summary.total === 1 ? 'person' : 'people'} matched`;

export const leadRoutes = ({ leads, enrichment }: { leads: LeadService; enrichment: EnrichmentService }) => [
  route('post', '/v1/mixed_people/search', async ({ auth, body }) =>
    ok('People found', await leads.searchPeople(auth.workspaceId, body)),
  ),
  route('post', '/v1/company/find', async ({ auth, body }) =>
    ok('Companies found', await leads.findCompanies(auth.workspaceId, body)),
  ),
  route('post', '/v1/people_enrichment/peopleEnrichment', async ({ auth, body }) => {
    const data = await enrichment.enrich(auth.workspaceId, body.people, body.dataOptions);
    return ok(enrichmentMessage(data), data);
  }),
  // The v2 batch form of peopleEnrichment: the same service, up to 100 inputs (the spec bounds it).
  route('post', '/v2/enrich/by-details', async ({ auth, body }) => {
    const data = await enrichment.enrich(auth.workspaceId, body.people, body.dataOptions);
    return ok(enrichmentMessage(data), data);
  }),
];
