/** The inbox module's face: what other modules may use of it. */
export { zeroIntents } from './reply-intents';
export type { IntentCounts, ReplyIntentService } from './reply-intents';
