/** The usage module's face: what other modules may use of it. */
import { UsageService, type UsageServiceDeps } from './service';

export const createUsageModule = (deps: UsageServiceDeps) => new UsageService(deps);
