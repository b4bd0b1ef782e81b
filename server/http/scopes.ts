/** The HTTP answer to a key that lacks a scope (server/platform/scopes.ts decides what a key holds). */
import { ApiError } from './errors';

/** The 403 of a key that lacks the scope an operation needs. */
export const missingScope = (scope: string) =>
  new ApiError(403, 'insufficient_scope', `This API key lacks the scope ${scope} that this operation needs.`, [
    { field: 'header.X-API-Key', location: 'header', message: `missing scope ${scope}`, code: 'insufficient_scope' },
  ]);
