/** The inbox module's face: what other modules may use of it. */
import { ReplyIntentService, type ReplyIntentServiceDeps } from './reply-intents';
import { InboxService, type InboxServiceDeps } from './service';
export { zeroIntents } from './reply-intents';
export type { IntentCounts, ReplyIntentService } from './reply-intents';

export const createReplyIntentModule = (deps: ReplyIntentServiceDeps) => new ReplyIntentService(deps);

export const createInboxModule = (deps: InboxServiceDeps) => new InboxService(deps);
