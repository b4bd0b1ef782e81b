/** The leads module's face: what other modules may use of it. */
export type { EnrichmentService } from './enrichment';
export type { LeadService } from './service';
