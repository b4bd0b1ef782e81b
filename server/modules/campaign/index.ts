/** The campaign module's face: what other modules may use of it. */
import { CampaignService, type CampaignServiceDeps } from './service';
import { SubsequenceService, type SubsequenceServiceDeps } from './subsequences';
export type { CampaignService, ScheduleJson } from './service';

export const createCampaignModule = (deps: CampaignServiceDeps) => new CampaignService(deps);

export const createSubsequenceModule = (deps: SubsequenceServiceDeps) => new SubsequenceService(deps);
export type { SubsequenceTriggers } from './subsequences';
