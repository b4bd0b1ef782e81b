/** The warmup module's face: what other modules may use of it. */
export type { PoolMember } from './service';
