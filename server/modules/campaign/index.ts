/** The campaign module's face: what other modules may use of it. */
import { CampaignService } from './service';
import { SubsequenceService } from './subsequences';
export type { CampaignService, ScheduleJson } from './service';

type CampaignServiceArgs = ConstructorParameters<typeof CampaignService>;
/** What CampaignService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface CampaignModuleDeps {
  db: CampaignServiceArgs[0];
  store: CampaignServiceArgs[1];
  events: CampaignServiceArgs[2];
  accounts: CampaignServiceArgs[3];
  progress: CampaignServiceArgs[4];
  clock: CampaignServiceArgs[5];
  trackingDomains: CampaignServiceArgs[6];
}
export const createCampaignModule = (d: CampaignModuleDeps) =>
  new CampaignService(d.db, d.store, d.events, d.accounts, d.progress, d.clock, d.trackingDomains);

type SubsequenceServiceArgs = ConstructorParameters<typeof SubsequenceService>;
/** What SubsequenceService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface SubsequenceModuleDeps {
  db: SubsequenceServiceArgs[0];
  store: SubsequenceServiceArgs[1];
  campaigns: SubsequenceServiceArgs[2];
  progress: SubsequenceServiceArgs[3];
  contacts: SubsequenceServiceArgs[4];
  totals: SubsequenceServiceArgs[5];
  events: SubsequenceServiceArgs[6];
  clock: SubsequenceServiceArgs[7];
}
export const createSubsequenceModule = (d: SubsequenceModuleDeps) =>
  new SubsequenceService(d.db, d.store, d.campaigns, d.progress, d.contacts, d.totals, d.events, d.clock);
export type { SubsequenceTriggers } from './subsequences';
