/** The webhooks module's face: what other modules may use of it. */
import { WebhookService } from './service';

type WebhookServiceArgs = ConstructorParameters<typeof WebhookService>;
/** What WebhookService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface WebhookModuleDeps {
  db: WebhookServiceArgs[0];
  store: WebhookServiceArgs[1];
  secrets: WebhookServiceArgs[2];
  campaigns: WebhookServiceArgs[3];
  config: WebhookServiceArgs[4];
  clock: WebhookServiceArgs[5];
  audit: WebhookServiceArgs[6];
}
export const createWebhookModule = (d: WebhookModuleDeps) =>
  new WebhookService(d.db, d.store, d.secrets, d.campaigns, d.config, d.clock, d.audit);
