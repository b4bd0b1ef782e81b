/**
 * X-API-Key authentication for every /v1 and /v2 request. Failed attempts are limited per client
 * address across all processes (auth-failures.ts) so that no one can probe keys at speed; a valid key
 * always passes.
 */
import type { NextFunction, Request, Response } from 'express';
import type { AuthFailureLimiter } from './auth-failures';
import type { WorkspaceService } from '../modules/workspace/service';
import { ApiError } from './errors';

export interface AuthContext {
  keyId: string;
  workspaceId: string;
  workspaceName: string;
  whitelabelEnabled: boolean;
  timezone: string;
  limits: { perSecond: number | null; perMin: number; perHour: number; perDay: number };
}

export function authenticate(workspaces: WorkspaceService, failures: AuthFailureLimiter) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const key = await workspaces.authenticate(req.get('x-api-key'));
      const auth: AuthContext = {
        keyId: key.id,
        workspaceId: key.workspace.id,
        workspaceName: key.workspace.name,
        whitelabelEnabled: key.workspace.whitelabel_enabled,
        timezone: key.workspace.timezone,
        limits: {
          perSecond: key.plan.per_second,
          perMin: key.plan.per_min,
          perHour: key.plan.per_hour,
          perDay: key.plan.per_day,
        },
      };
      res.locals.auth = auth;
      next();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        // req.ip honours TRUST_PROXY: forwarded addresses count only from the proxies it names.
        const retryAfter = await failures.recordFailure(req.ip ?? 'unknown');
        if (retryAfter > 0) {
          throw new ApiError(429, 'rate_limited', 'Too many failed authentication attempts. Please try again in a minute.', [], {
            'Retry-After': String(retryAfter),
          });
        }
      }
      throw err;
    }
  };
}
