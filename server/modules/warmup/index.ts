/** The warmup module's face: what other modules may use of it. */
import { WarmupService, type WarmupServiceDeps } from './service';
export type { NewPoolMailbox, PoolMember } from './pool';

export const createWarmupModule = (deps: WarmupServiceDeps) => new WarmupService(deps);
