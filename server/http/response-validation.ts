/**
 * Response validation (VALIDATE_RESPONSES: on in the tests): each JSON answer of an operation is checked, as it
 * goes on the wire, against the schema the spec documents for its status, and one that breaks the spec becomes a
 * 500 naming the mismatch (a server bug). 5xx answers are not checked.
 *
 * Not express-openapi-validator's own response validation: that one adds a copy of the whole spec (every path and
 * component) to Ajv for each answer of each operation, which took 0.7 s of compiling per operation on its first
 * answer (110 s to answer each of 127 operations once). Here the spec is compiled against once per server.
 */
import type { NextFunction, Request, Response } from 'express';
import { SpecSchemas } from '../platform/spec-schemas';
import { ApiError } from './errors';

/** What express-openapi-validator notes on a request it matched to an operation. */
interface MatchedRequest extends Request {
  openapi?: { openApiRoute?: string };
}

export function responseValidation(spec: object) {
  const schemas = new SpecSchemas(spec);
  const problemOf = (req: MatchedRequest, status: number, body: unknown): string | undefined => {
    const path = req.openapi?.openApiRoute;
    // Not an operation of the spec (no route matched): nothing documents the answer.
    if (!path) return undefined;
    const at = schemas.responseSchema(path, req.method.toLowerCase(), status, 'application/json');
    if (at === undefined) return `${req.method} ${path} documents no ${status} answer`;
    if (at === null) return `${req.method} ${path} documents no JSON body for ${status}`;
    // As sent: JSON.stringify turns dates into strings and drops undefined members.
    const wire: unknown = body === undefined ? undefined : JSON.parse(JSON.stringify(body));
    const errors = schemas.validate(at, wire);
    return errors.length ? errors.join('; ') : undefined;
  };
  return (req: MatchedRequest, res: Response, next: NextFunction): void => {
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      res.json = send;
      const problem = res.statusCode < 500 ? problemOf(req, res.statusCode, body) : undefined;
      if (!problem) return send(body);
      next(new ApiError(500, 'internal_error', `Response does not match the spec: ${problem}`));
      return res;
    };
    next();
  };
}
