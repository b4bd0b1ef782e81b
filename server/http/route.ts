/**
 * The typed route helper. A route is declared once by its seed path (`/v1/...` or a v2-only
 * `/v2/...`) and method; params, query, body and the success body are the spec's types from
 * generated/api.d.ts, so a handler that reads a field the spec lacks or returns the wrong shape does
 * not compile. `/v1` routes are also served under `/v2` (see app.ts).
 */
import type { Readable } from 'node:stream';
import type { Request, Response, Router } from 'express';
import type { HttpMethod, PathsWithMethod, RequestBodyJSON, SuccessResponseJSON } from 'openapi-typescript-helpers';
import type { paths } from '../../generated/api';
import type { AuthContext, QuotaWindowUse } from './admission';
import { holds } from '../platform/scopes';
import { missingScope } from './scopes';
import type { AuditRecord, Auditor } from '../platform/audit';
import { causing, type Cause } from '../platform/cause';
import { fieldsOf, targetIdsOf } from './audit';
import { keyActorOf } from './channel';
import { toApiError } from './error-middleware';

type Method = Extract<HttpMethod, 'get' | 'post' | 'put' | 'delete'>;
type Operation<P extends keyof paths, M extends Method> = paths[P][M];
type Parameters<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: infer X } ? X : never;

export type PathParams<P extends keyof paths, M extends Method> =
  Parameters<P, M> extends { path: infer X } ? (X extends undefined ? Record<string, never> : X) : never;
export type QueryParams<P extends keyof paths, M extends Method> =
  Parameters<P, M> extends { query?: infer X } ? NonNullable<X> : never;
export type RequestBody<P extends keyof paths, M extends Method> = RequestBodyJSON<Operation<P, M>>;
export type SuccessBody<P extends keyof paths, M extends Method> = SuccessResponseJSON<
  Operation<P, M> & Record<string | number, unknown>
>;

export interface RouteContext<P extends keyof paths, M extends Method> {
  params: PathParams<P, M>;
  query: QueryParams<P, M>;
  body: RequestBody<P, M>;
  auth: AuthContext;
  /** The quota windows as this request's count left them. */
  quota: QuotaWindowUse[];
  requestId: string;
  apiVersion: 'v1' | 'v2';
  /** A body no parser read (a CSV upload), as a stream: the request, or the copy the idempotency layer read first. */
  upload: Readable;
  req: Request;
  res: Response;
}

/** A handler that wrote the response itself (a streamed export) returns this. */
export const STREAMED = Symbol('streamed');

export interface Route {
  method: Method;
  /** The seed path, e.g. `/v1/campaign/get/name`. */
  path: string;
  /**
   * Mounts the handler, refusing with 403 a key that lacks the operation's `x-required-scope`; a request that
   * is not a GET is recorded by `audit` with its outcome, refusals and failures included, and then told to
   * `noteChange` (a read replica's router: the workspace's replica reads wait until the replica has this change).
   */
  register(
    router: Router,
    operation: { scope: string; operationId: string },
    audit: Auditor,
    noteChange?: (workspaceId: string) => Promise<void>,
  ): void;
}

export function route<M extends Method, P extends PathsWithMethod<paths, M>>(
  method: M,
  path: P,
  handler: (ctx: RouteContext<P, M>) => Promise<SuccessBody<P, M> | typeof STREAMED>,
  options: { status?: 200 | 201 | 202 } = {},
): Route {
  // `/v1/campaign/get/name` is mounted as `/campaign/get/name` under both versions; `{id}` -> `:id`.
  const expressPath = (path as string).replace(/^\/v[12]/, '').replace(/\{(\w+)\}/g, ':$1');
  return {
    method,
    path,
    register(router, { scope, operationId }, audit, noteChange) {
      router[method](expressPath, async (req: Request, res: Response) => {
        const auth = res.locals.auth as AuthContext;
        const requestId = res.locals.requestId as string;
        const run = async () => {
          if (!holds(auth.scopes, scope)) throw missingScope(scope);
          return handler({
            params: req.params as PathParams<P, M>,
            query: req.query as QueryParams<P, M>,
            body: req.body as RequestBody<P, M>,
            auth,
            quota: res.locals.quota as QuotaWindowUse[],
            requestId,
            apiVersion: res.locals.apiVersion as 'v1' | 'v2',
            upload: (res.locals.upload as Readable | undefined) ?? req,
            req,
            res,
          });
        };
        if (method === 'get') {
          const result = await run();
          if (result !== STREAMED) res.status(options.status ?? 200).json(result);
          return;
        }
        const actor = keyActorOf(req);
        const entry = (status: number): AuditRecord => ({
          workspaceId: auth.workspaceId,
          actor,
          keyId: auth.keyId,
          keyName: auth.keyName,
          operation: operationId,
          targetIds: cause.targetIds,
          fields: cause.fields,
          address: cause.address,
          status,
          requestId,
        });
        const cause: Cause = {
          actor,
          workspaceId: auth.workspaceId,
          keyId: auth.keyId,
          keyName: auth.keyName,
          operation: operationId,
          requestId,
          address: req.ip ?? null,
          targetIds: targetIdsOf(req.params, req.query, req.body),
          fields: fieldsOf(req.body),
          successStatus: options.status ?? 200,
          // The change commits with its entry: the work it belongs to succeeded.
          writeEntry: (trx) => audit.record(entry(options.status ?? 200), trx),
        };
        const record = async (status: number) => {
          await audit.record(entry(status));
          await noteChange?.(auth.workspaceId);
        };
        let result: SuccessBody<P, M> | typeof STREAMED;
        try {
          // What the operation changes is recorded as this key's doing (the credit ledger, the audit log).
          result = await causing(cause, run);
        } catch (err) {
          await record(toApiError(err)?.status ?? 500);
          throw err;
        }
        // The work's first transaction wrote this request's entry (server/db), unless it had none.
        if (!cause.recorded) await record(options.status ?? 200);
        else await noteChange?.(auth.workspaceId);
        if (result !== STREAMED) res.status(options.status ?? 200).json(result);
      });
    },
  };
}

/** The seed's success envelope: `return ok('Campaign created', { campaign })`. */
export function ok<D>(message: string, data: D) {
  return { status: 'success' as const, success: true as const, message, data };
}
