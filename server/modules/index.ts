/**
 * Every module's routes. A module lives in the folder named after its path's first segment after
 * the version: `/v1/campaign/get/name` is in `modules/campaign/routes.ts`.
 */
import type { Route } from '../http/route';
import type { Services } from '../services';
import { accountRoutes } from './account/routes';
import { analyticsRoutes } from './analytics/routes';
import { authenticateRoutes } from './authenticate/routes';
import { campaignRoutes } from './campaign/routes';
import { companyRoutes } from './company/routes';
import { contactRoutes } from './contact/routes';
import { mixedPeopleRoutes } from './mixed_people/routes';
import { ratelimitRoutes } from './ratelimit/routes';
import { peopleVerificationRoutes } from './people_verification/routes';
import { peopleEnrichmentRoutes } from './people_enrichment/routes';
import { enrichRoutes } from './enrich/routes';
import { listRoutes } from './list/routes';
import { whitelabelRoutes } from './whitelabel/routes';
import { inboxRoutes } from './inbox/routes';
import { sendingRoutes } from './sending/routes';
import { suppressionRoutes } from './suppression/routes';
import { webhookRoutes } from './webhooks/routes';

export function allRoutes(services: Services): Route[] {
  return [
    ...ratelimitRoutes(),
    ...authenticateRoutes(),
    ...campaignRoutes(services),
    ...accountRoutes(services),
    ...analyticsRoutes(services),
    ...contactRoutes(services),
    ...mixedPeopleRoutes(services),
    ...companyRoutes(services),
    ...peopleVerificationRoutes(services),
    ...peopleEnrichmentRoutes(services),
    ...enrichRoutes(services),
    ...listRoutes(services),
    ...whitelabelRoutes(services),
    ...inboxRoutes(services),
    ...sendingRoutes(services),
    ...suppressionRoutes(services),
    ...webhookRoutes(services),
  ];
}
