/** The sending module's face: what other modules may use of it. */
import { SendingService, type SendingServiceDeps } from './service';
export type { MessageLinks, MessageRef } from './service';

export const createSendingModule = (deps: SendingServiceDeps) => new SendingService(deps);
