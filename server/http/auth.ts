/**
 * X-API-Key authentication and the quota for every /v1 and /v2 request, in one database round trip
 * (quota.ts). Failed attempts are limited per client address across all processes (auth-failures.ts)
 * so that no one can probe keys at speed; a valid key always passes.
 */
import type { NextFunction, Request, Response } from 'express';
import type { AuthFailureLimiter } from './auth-failures';
import type { KeyAdmission } from './admission';
import { ApiError, unauthorized } from './errors';
import { hashKey } from '../platform/key-hash';
import type { Telemetry } from '../observability/telemetry';

const UNAUTHORIZED = {
  unknown: 'Invalid API key.',
  revoked: 'This API key has been revoked.',
  expired: 'This API key has expired.',
} as const;

/** Resolves the key and counts the request; 401 for a missing, unknown, revoked or expired key, 429 over a quota window. */
export function authenticate(quota: KeyAdmission, failures: AuthFailureLimiter, telemetry: Telemetry) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const apiKey = req.get('x-api-key');
    const admission = apiKey ? await quota.admit(hashKey(apiKey)) : undefined;
    if (admission?.key !== 'valid') {
      // req.ip honours TRUST_PROXY: forwarded addresses count only from the proxies it names.
      const { retryAfter, headers } = await failures.recordFailure(req.ip ?? 'unknown');
      // A request without a valid key counts toward its address's failures, not a workspace's quota.
      res.set(headers);
      telemetry.authFailed(retryAfter > 0 ? 'throttled' : !admission ? 'missing' : admission.key);
      if (retryAfter > 0) {
        throw new ApiError(
          429,
          'rate_limited',
          'Too many failed authentication attempts. Please try again in a minute.',
          [],
          {
            'Retry-After': String(retryAfter),
          },
        );
      }
      if (!admission) throw unauthorized('Missing API key. Send it in the X-API-Key header.');
      throw unauthorized(UNAUTHORIZED[admission.key]);
    }
    res.locals.auth = admission.auth;
    const { decision } = admission;
    res.locals.quota = decision.windows;
    res.set(decision.headers);
    if (!decision.admitted) {
      telemetry.quotaRefused(decision.exceeded!.name);
      throw new ApiError(429, 'rate_limited', decision.exceeded!.message, [], {
        'Retry-After': String(decision.retryAfterSeconds),
      });
    }
    next();
  };
}
