/** The sending module's face: what other modules may use of it. */
export type { MessageLinks, MessageRef } from './service';
