/**
 * createApp(deps): the whole HTTP stack, without listening. main.ts and the tests both use it.
 *
 * Order: request id and version -> health, docs and spec (no key, no quota) -> X-API-Key and quota (one database
 * round trip, the key's scopes with it) -> JSON body -> the MCP server at /mcp (server/mcp: its tool calls come back
 * into this app as requests) -> the deprecation headers of a deprecated operation or field -> OpenAPI request
 * validation (and the non-finite numbers
 * its coercion lets through) -> idempotency keys -> routes (each refusing a key without the scope its operation declares; /v1 routes under /v1 and /v2,
 * v2-only routes under /v2; looked up by their first segment) -> 404 -> the error middleware.
 */
import cors from 'cors';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { APP_DIR, DOCS_DIR, EXAMPLES_DIR, readBundledSpec, type BundledSpec } from './platform/project-root';
import { requestContext } from './http/request-context';
import { requestLog } from './http/request-log';
import { healthRoutes, type Readiness } from './http/health';
import { authenticate } from './http/auth';
import { AuthFailureLimiter } from './http/auth-failures';
import { idempotency } from './http/idempotency';
import { errorMiddleware } from './http/error-middleware';
import { rejectUnsafeText } from './http/text-safety';
import { headAsGet } from './http/head';
import { deprecationHeaders } from './http/deprecation';
import { consoleApp } from './http/console-app';
import { docsPortal } from './http/docs-portal';
import { rejectUnsafeNumbers } from './http/json-numbers';
import { ApiError } from './http/errors';
import { finiteQueryNumbers } from './http/pagination';
import { routeOperations } from './platform/scopes';
import type { Auditor } from './platform/audit';
import { noTelemetry } from './observability/telemetry';
import { trackingRouter } from './modules/tracking/routes';
import { oauthCallbackRouter } from './modules/account/oauth-routes';
import { createRoutes, createServices, type Deps, type Services } from './services';
import { mcpRouter } from './mcp/http';
import type { Route } from './http/route';
import { responseValidation } from './http/response-validation';

/**
 * The routes in a router per first path segment (`/campaign/...`), and a middleware that hands a request to
 * its segment's router: a request is matched against its module's few routes, not the API's ninety in turn.
 * Segments are looked up in lower case, since Express routes without case sensitivity.
 */
function bySegment(
  routes: Route[],
  operations: Map<string, { scope: string; operationId: string }>,
  version: 'v1' | 'v2',
  audit: Auditor,
  noteChange: Services['noteChange'],
) {
  const routers = new Map<string, Router>();
  for (const r of routes) {
    const segment = r.path.split('/')[2].toLowerCase();
    let router = routers.get(segment);
    if (!router) routers.set(segment, (router = Router()));
    const key = `${r.method.toUpperCase()} /${version}${r.path.slice(3)}`;
    const operation = operations.get(key);
    if (!operation) throw new Error(`${key} is served but not in the spec`);
    r.register(router, operation, audit, noteChange);
  }
  return (req: Request, res: Response, next: NextFunction): void => {
    const router = routers.get(req.path.split('/', 2)[1].toLowerCase());
    if (router) router(req, res, next);
    else next();
  };
}

export interface AppOptions {
  /** The process's shutdown state, which /readyz reports (main.ts); tests may pass their own. */
  readiness?: Readiness;
  /** The contract served and enforced: generated/openapi.json unless a test passes a changed copy. */
  spec?: BundledSpec;
}

export function createApp(deps: Deps, services: Services = createServices(deps), options: AppOptions = {}) {
  const { config, logger, clock, db } = deps;
  const spec = options.spec ?? readBundledSpec();
  const app = express();
  app.disable('x-powered-by');
  // No ETag: the spec documents none (nor the 304 a client's copy of one would get), and Express hashed every body for it.
  app.set('etag', false);
  // Which proxies may name the client address (X-Forwarded-For): none unless TRUST_PROXY says so.
  app.set('trust proxy', config.trustProxy);

  app.use(requestContext);
  const telemetry = deps.telemetry ?? noTelemetry;
  const observe = telemetry.requests();
  if (observe) app.use(observe);
  // Browser clients from the configured origins; a preflight is answered here, before the key and the quota.
  if (config.corsOrigins.length) {
    app.use(
      cors({
        origin: config.corsOrigins,
        allowedHeaders: [
          'Content-Type',
          'X-API-Key',
          'Idempotency-Key',
          'Authorization',
          'Mcp-Session-Id',
          'Mcp-Protocol-Version',
          'Last-Event-ID',
        ],
        exposedHeaders: [
          'X-Request-Id',
          'RateLimit',
          'RateLimit-Policy',
          'Retry-After',
          'Idempotent-Replayed',
          'Mcp-Session-Id',
          'WWW-Authenticate',
          'Deprecation',
          'Sunset',
          'Link',
        ],
        maxAge: 600,
      }),
    );
  }
  app.use(requestLog(logger));

  app.use(healthRoutes(db, options.readiness ?? { draining: false, jobs: [] }));
  // The address a newcomer opens first: where the documentation and the contract are.
  app.get('/', (_req, res) => {
    res.json({
      name: spec.info.title,
      version: spec.info.version,
      docs: '/docs',
      openapi: '/openapi.json',
      health: '/healthz',
    });
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(spec);
  });
  // The portal names the origin it is served from as the local server (http/docs-portal.ts).
  const servers = (spec.servers ?? []).map((s) => s.url);
  app.use('/docs', docsPortal(DOCS_DIR, servers));
  if (config.serveExamples) app.use('/examples', express.static(EXAMPLES_DIR));
  // The web console (app/, built by `npm run build`): static files under a strict Content-Security-Policy.
  app.use('/app', consoleApp(APP_DIR));

  // Links in emails: no key, no quota (modules/tracking/routes.ts).
  app.use(trackingRouter(services.tracking, services.trackingDomains));
  // The OAuth provider's redirect back: no key, no quota (modules/account/oauth-routes.ts).
  app.use(oauthCallbackRouter(services.oauth));

  const admit = authenticate(
    services.quota,
    new AuthFailureLimiter({ db, clock, perMinute: config.authFailuresPerMinute }),
    telemetry,
  );
  // The key and the quota before the body is read, so an answer about the body (413, malformed JSON) carries the
  // rate-limit headers like every other answer.
  app.use(['/v1', '/v2'], admit);
  // Bulk jobs take larger JSON bodies (up to 100,000 contacts); their CSV bodies are streamed by the handler.
  app.use('/v2/job', express.json({ limit: config.jobBodyLimitBytes, verify: rejectUnsafeNumbers }));
  app.use(express.json({ limit: config.bodyLimitBytes, verify: rejectUnsafeNumbers }));
  app.use(mcpRouter({ app, admit, spec }));
  app.use(['/v1', '/v2'], rejectUnsafeText, headAsGet);
  // Before validation, so that a refused request of a deprecated operation learns it too.
  app.use(deprecationHeaders(spec));
  app.use(
    OpenApiValidator.middleware({
      apiSpec: spec,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: false,
      validateSecurity: false,
      validateFormats: true,
      ignoreUndocumented: false,
    }),
  );
  if (config.validateResponses) app.use(responseValidation(spec));

  app.use(finiteQueryNumbers);
  app.use(['/v1', '/v2'], idempotency(services.idempotency, spec, logger, telemetry, config.jobBodyLimitBytes));

  const routes = createRoutes(services);
  // Each operation's scope, read once here: a request's check is a look-up in the key's own scopes.
  const operations = routeOperations(spec);
  app.use(
    '/v1',
    bySegment(
      routes.filter((r) => r.path.startsWith('/v1/')),
      operations,
      'v1',
      services.audit,
      services.noteChange,
    ),
  );
  // /v1 routes are served under /v2 too, ahead of the v2-only ones.
  app.use(
    '/v2',
    bySegment(
      [...routes.filter((r) => r.path.startsWith('/v1/')), ...routes.filter((r) => !r.path.startsWith('/v1/'))],
      operations,
      'v2',
      services.audit,
      services.noteChange,
    ),
  );

  app.use(() => {
    throw new ApiError(404, 'not_found', 'Route not found.');
  });
  app.use(errorMiddleware(logger));
  return app;
}
