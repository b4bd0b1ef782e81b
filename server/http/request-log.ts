/**
 * One JSON log line per request when its response is finished (or its connection closes first), in the
 * shape pino-http wrote: `req` (id, method, url with its query's values redacted, remote address), `res` (status), `responseTime` in ms and
 * the workspace; no headers, since they carry the API key. Written on the application's pino logger
 * rather than through pino-http, which built two child loggers per request and serialized the request
 * into each: bench:http measured it at 53 µs of CPU per `/healthz` request out of 146, this at 16.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../platform/logger';
import type { AuthContext } from './admission';
import { redactUrl } from '../platform/redact';

/**
 * A balancer's and an orchestrator's polls, every few seconds: logged at debug, their 503s (not ready: draining,
 * migrations pending, database away) included, which are answers, not failures.
 */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);

/**
 * One line per request: at debug for health polls, warn for a 503 (unavailable for now: storage away, draining,
 * admission), error for any other 5xx, info otherwise.
 */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    const done = (): void => {
      res.off('finish', done);
      res.off('close', done);
      const line = {
        req: {
          id: res.locals.requestId as string,
          method: req.method,
          url: redactUrl(req.originalUrl),
          remoteAddress: req.socket.remoteAddress,
        },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(performance.now() - started),
        workspaceId: (res.locals.auth as AuthContext | undefined)?.workspaceId,
      };
      if (!res.writableFinished) logger.warn(line, 'request aborted');
      else if (HEALTH_PATHS.has(req.path)) logger.debug(line, 'health checked');
      else if (res.statusCode === 503) logger.warn(line, 'request refused for now');
      else if (res.statusCode >= 500) logger.error(line, 'request errored');
      else logger.info(line, 'request completed');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
