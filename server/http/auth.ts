/**
 * X-API-Key authentication for every /v1 and /v2 request. Failed attempts are limited per client
 * address (in this process's memory: enough to make guessing a 256-bit key pointless) so that no
 * one can probe keys at speed.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Clock } from '../clock';
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

export function authenticate(workspaces: WorkspaceService, clock: Clock, failuresPerMinute: number) {
  const failures = new Map<string, number[]>();

  const recentFailures = (ip: string, now: number): number[] => {
    const kept = (failures.get(ip) ?? []).filter((t) => t > now - 60_000);
    if (kept.length) failures.set(ip, kept);
    else failures.delete(ip);
    return kept;
  };

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const ip = req.ip ?? 'unknown';
    const now = clock.now().getTime();
    const recent = recentFailures(ip, now);
    if (recent.length >= failuresPerMinute) {
      const retryAfter = Math.max(1, Math.ceil((recent[0] + 60_000 - now) / 1000));
      throw new ApiError(429, 'rate_limited', 'Too many failed authentication attempts. Please try again in a minute.', [], {
        'Retry-After': String(retryAfter),
      });
    }
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
      if (err instanceof ApiError && err.status === 401) failures.set(ip, [...recent, now]);
      throw err;
    }
  };
}
