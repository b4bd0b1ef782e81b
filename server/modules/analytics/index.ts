/** The analytics module's face: what other modules may use of it. */
import { AnalyticsService, type AnalyticsServiceDeps } from './service';

export const createAnalyticsModule = (deps: AnalyticsServiceDeps) => new AnalyticsService(deps);
