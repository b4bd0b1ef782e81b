/** The credits module's face: what other modules may use of it. */
export type { CreditService } from './service';
