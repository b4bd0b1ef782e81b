/**
 * Every module's routes. A module lives in the folder named after its path's first segment after
 * the version: `/v1/campaign/get/name` is in `modules/campaign/routes.ts`.
 */
import type { Route } from '../http/route';
import type { Services } from '../services';
import { authenticateRoutes } from './authenticate/routes';
import { contactRoutes } from './contact/routes';
import { ratelimitRoutes } from './ratelimit/routes';

// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function allRoutes(services: Services): Route[] {
  return [...ratelimitRoutes(), ...authenticateRoutes(), ...contactRoutes(services)];
}
