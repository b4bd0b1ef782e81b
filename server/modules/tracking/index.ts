/** The tracking module's face: what other modules may use of it. */
export type { RemovalRef } from './service';
