/** The credits module's face: what other modules may use of it. */
import { CreditService, type CreditServiceDeps } from './service';
export type { CreditService } from './service';

export const createCreditModule = (deps: CreditServiceDeps) => new CreditService(deps);
