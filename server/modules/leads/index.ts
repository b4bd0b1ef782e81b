/** The leads module's face: what other modules may use of it. */
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
