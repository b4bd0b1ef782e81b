/** The suppression module's face: what other modules may use of it. */
import { SuppressionService, type SuppressionServiceDeps } from './service';
export type { SuppressionService } from './service';

export const createSuppressionModule = (deps: SuppressionServiceDeps) => new SuppressionService(deps);
