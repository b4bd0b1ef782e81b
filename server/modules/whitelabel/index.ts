/** The whitelabel module's face: what other modules may use of it. */
import { WhitelabelService, type WhitelabelServiceDeps } from './service';

export const createWhitelabelModule = (deps: WhitelabelServiceDeps) => new WhitelabelService(deps);
