/**
 * HEAD on a GET operation answers as the GET without a body (RFC 9110). The spec lists GET only, so
 * the request is routed and validated as GET; Node omits the body of a response to a HEAD request.
 */
import type { NextFunction, Request, Response } from 'express';

export function headAsGet(req: Request, _res: Response, next: NextFunction): void {
  if (req.method === 'HEAD') req.method = 'GET';
  next();
}
