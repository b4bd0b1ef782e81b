/** The analytics module's face: what other modules may use of it. */
import { AnalyticsService } from './service';

type AnalyticsServiceArgs = ConstructorParameters<typeof AnalyticsService>;
/** What AnalyticsService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface AnalyticsModuleDeps {
  db: AnalyticsServiceArgs[0];
  events: AnalyticsServiceArgs[1];
  campaigns: AnalyticsServiceArgs[2];
  contacts: AnalyticsServiceArgs[3];
  accounts: AnalyticsServiceArgs[4];
  intents: AnalyticsServiceArgs[5];
  clock: AnalyticsServiceArgs[6];
  winners: AnalyticsServiceArgs[7];
}
export const createAnalyticsModule = (d: AnalyticsModuleDeps) =>
  new AnalyticsService(d.db, d.events, d.campaigns, d.contacts, d.accounts, d.intents, d.clock, d.winners);
