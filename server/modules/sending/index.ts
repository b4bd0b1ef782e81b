/** The sending module's face: what other modules may use of it. */
import { SendingService } from './service';
export type { MessageLinks, MessageRef } from './service';

type SendingServiceArgs = ConstructorParameters<typeof SendingService>;
/** What SendingService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface SendingModuleDeps {
  db: SendingServiceArgs[0];
  store: SendingServiceArgs[1];
  accounts: SendingServiceArgs[2];
  contacts: SendingServiceArgs[3];
  events: SendingServiceArgs[4];
  suppression: SendingServiceArgs[5];
  links: SendingServiceArgs[6];
  mail: SendingServiceArgs[7];
  warmup: SendingServiceArgs[8];
  clock: SendingServiceArgs[9];
  providers: SendingServiceArgs[10];
  campaigns: SendingServiceArgs[11];
  triggers: SendingServiceArgs[12];
  verified: SendingServiceArgs[13];
}
export const createSendingModule = (d: SendingModuleDeps) =>
  new SendingService(
    d.db,
    d.store,
    d.accounts,
    d.contacts,
    d.events,
    d.suppression,
    d.links,
    d.mail,
    d.warmup,
    d.clock,
    d.providers,
    d.campaigns,
    d.triggers,
    d.verified,
  );
