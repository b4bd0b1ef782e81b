/** The leads module's face: what other modules may use of it. */
import { EnrichmentService } from './enrichment';
import { LeadService } from './service';
export type { EnrichmentService } from './enrichment';
export type { LeadService } from './service';

type LeadServiceArgs = ConstructorParameters<typeof LeadService>;
/** What LeadService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface LeadModuleDeps {
  db: LeadServiceArgs[0];
  store: LeadServiceArgs[1];
  clock: LeadServiceArgs[2];
  credits: LeadServiceArgs[3];
  costs: LeadServiceArgs[4];
}
export const createLeadModule = (d: LeadModuleDeps) => new LeadService(d.db, d.store, d.clock, d.credits, d.costs);

type EnrichmentServiceArgs = ConstructorParameters<typeof EnrichmentService>;
/** What EnrichmentService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface EnrichmentModuleDeps {
  db: EnrichmentServiceArgs[0];
  store: EnrichmentServiceArgs[1];
  leads: EnrichmentServiceArgs[2];
}
export const createEnrichmentModule = (d: EnrichmentModuleDeps) => new EnrichmentService(d.db, d.store, d.leads);
