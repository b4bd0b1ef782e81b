/** The leads module's face: what other modules may use of it. */
import { EnrichmentService, type EnrichmentServiceDeps } from './enrichment';
import { LeadService, type LeadServiceDeps } from './service';
export type { EnrichmentService } from './enrichment';
export type { LeadService } from './service';

export const createLeadModule = (deps: LeadServiceDeps) => new LeadService(deps);

export const createEnrichmentModule = (deps: EnrichmentServiceDeps) => new EnrichmentService(deps);
