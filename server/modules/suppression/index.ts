/** The suppression module's face: what other modules may use of it. */
export type { SuppressionService } from './service';
