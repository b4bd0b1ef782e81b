/** The webhooks module's face: what other modules may use of it. */
import { WebhookService, type WebhookServiceDeps } from './service';

export const createWebhookModule = (deps: WebhookServiceDeps) => new WebhookService(deps);
