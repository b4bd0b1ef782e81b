/** The inbox module's face: what other modules may use of it. */
import { ReplyIntentService } from './reply-intents';
import { InboxService } from './service';
export { zeroIntents } from './reply-intents';
export type { IntentCounts, ReplyIntentService } from './reply-intents';

type ReplyIntentServiceArgs = ConstructorParameters<typeof ReplyIntentService>;
/** What ReplyIntentService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface ReplyIntentModuleDeps {
  db: ReplyIntentServiceArgs[0];
  store: ReplyIntentServiceArgs[1];
  mail: ReplyIntentServiceArgs[2];
  campaigns: ReplyIntentServiceArgs[3];
  contacts: ReplyIntentServiceArgs[4];
  removal: ReplyIntentServiceArgs[5];
  events: ReplyIntentServiceArgs[6];
  clock: ReplyIntentServiceArgs[7];
}
export const createReplyIntentModule = (d: ReplyIntentModuleDeps) =>
  new ReplyIntentService(d.db, d.store, d.mail, d.campaigns, d.contacts, d.removal, d.events, d.clock);

type InboxServiceArgs = ConstructorParameters<typeof InboxService>;
/** What InboxService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface InboxModuleDeps {
  db: InboxServiceArgs[0];
  store: InboxServiceArgs[1];
  collaborators: InboxServiceArgs[2];
  clock: InboxServiceArgs[3];
  logger: InboxServiceArgs[4];
  settings?: InboxServiceArgs[5];
}
export const createInboxModule = (d: InboxModuleDeps) =>
  new InboxService(d.db, d.store, d.collaborators, d.clock, d.logger, d.settings);
