/** The job module's face: what other modules may use of it. */
import { JobService } from './service';

type JobServiceArgs = ConstructorParameters<typeof JobService>;
/** What JobService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface JobModuleDeps {
  db: JobServiceArgs[0];
  store: JobServiceArgs[1];
  contacts: JobServiceArgs[2];
  campaigns: JobServiceArgs[3];
  suppression: JobServiceArgs[4];
  verification: JobServiceArgs[5];
  enrichment: JobServiceArgs[6];
  leads: JobServiceArgs[7];
  lists: JobServiceArgs[8];
  events: JobServiceArgs[9];
  clock: JobServiceArgs[10];
  logger: JobServiceArgs[11];
  batchSize: JobServiceArgs[12];
  concurrency: JobServiceArgs[13];
  contactBulk: JobServiceArgs[14];
}
export const createJobModule = (d: JobModuleDeps) =>
  new JobService(
    d.db,
    d.store,
    d.contacts,
    d.campaigns,
    d.suppression,
    d.verification,
    d.enrichment,
    d.leads,
    d.lists,
    d.events,
    d.clock,
    d.logger,
    d.batchSize,
    d.concurrency,
    d.contactBulk,
  );
