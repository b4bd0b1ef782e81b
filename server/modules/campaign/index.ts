/** The campaign module's face: what other modules may use of it. */
export type { CampaignService, ScheduleJson } from './service';
