/**
 * First middleware: gives the request its id (X-Request-Id on every response) and notes the API
 * version from the first path segment, so every later error, even one raised before routing
 * (malformed JSON, a bad key), is written in its version's format.
 */
import type { NextFunction, Request, Response } from 'express';
import { newId } from '../platform/ids';

export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const requestId = newId();
  res.locals.requestId = requestId;
  res.locals.apiVersion = req.path.startsWith('/v2/') || req.path === '/v2' ? 'v2' : 'v1';
  res.setHeader('X-Request-Id', requestId);
  next();
}
