/**
 * OpenTelemetry traces, started only when OTEL_EXPORTER_OTLP_ENDPOINT is set (preload.ts decides, before
 * express and pg are first required, so their instrumentations can patch them). The standard Node SDK with the
 * HTTP, Express and pg instrumentations: one trace per request (its server span carries the workspace id and
 * the operation) and one per worker run. Spans go to `<endpoint>/v1/traces` as OTLP/HTTP JSON; the usual OTEL_*
 * variables (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_BSP_SCHEDULE_DELAY, ...) apply.
 *
 * A request's URL carries what a collector must not keep: contact addresses and search terms in the query, and
 * unsubscribe, open and click tokens or addresses in the path. A server span records the route template as its
 * path (`/v1/whitelabel/user/{email}`, `/c/:token`) and the query's names with every value redacted; and every
 * span, of any instrumentation, is exported with the URLs it quotes redacted (server/platform/redact.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { redactUrl, redactUrls } from '../platform/redact';
import { readBundledSpec } from '../platform/project-root';
import { operationRoutes } from './operations';

export interface Tracing {
  /** Runs one worker job pass in a trace of its own. */
  jobRun(job: string, run: () => Promise<number>): Promise<number>;
  shutdown(): Promise<void>;
}

/** The request as Express leaves it: the route that answered, under the router's mount path. */
type ExpressRequest = IncomingMessage & { originalUrl?: string; baseUrl?: string; route?: { path: string } };

function splitUrl(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at === -1 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}

/** A query's parameter names, every value replaced: `search=REDACTED&limit=REDACTED`. */
const redactedQuery = (query: string): string => redactUrl(`?${query}`).slice(1);

type Attributes = tracing.ReadableSpan['attributes'];

/** Attributes with every URL they quote redacted: `url.full`, `http.url`, `http.target`, an exception's message. */
function redactedAttributes(attributes: Attributes): Attributes {
  const redacted: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value !== 'string') redacted[key] = value;
    else if (key === 'url.query') redacted[key] = redactedQuery(value);
    else redacted[key] = key === 'http.target' ? redactUrl(value) : redactUrls(value);
  }
  return redacted;
}

/**
 * The exporter every span of the process leaves by, the API's and the worker's, whatever instrumentation made it
 * (an outgoing webhook delivery's client span carries the endpoint's URL): URL user info and query values go.
 */
class RedactingExporter implements tracing.SpanExporter {
  constructor(private readonly inner: tracing.SpanExporter) {}

  export(spans: tracing.ReadableSpan[], done: Parameters<tracing.SpanExporter['export']>[1]): void {
    const redacted = spans.map(
      (span): tracing.ReadableSpan =>
        Object.create(span, {
          name: { value: redactUrls(span.name) },
          attributes: { value: redactedAttributes(span.attributes) },
          events: {
            value: span.events.map((event) => ({
              ...event,
              attributes: event.attributes && redactedAttributes(event.attributes),
            })),
          },
        }) as tracing.ReadableSpan,
    );
    this.inner.export(redacted, done);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** A path no route matched (a 404): its first segment alone, since the rest may be anything. */
function unmatched(path: string): string {
  const [first, ...rest] = path.split('/').slice(1);
  return `/${first ?? ''}${rest.length ? '/…' : ''}`;
}

export function startTracing(): Tracing {
  const operationOf = operationRoutes(readBundledSpec());
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || 'outreach-api',
    traceExporter: new RedactingExporter(new OTLPTraceExporter()),
    instrumentations: [
      new HttpInstrumentation({
        // Attributes are set when the response ends: by then the key has named the workspace.
        applyCustomAttributesOnSpan(span: Span, request, response) {
          if (!('locals' in response)) return;
          const req = request as ExpressRequest;
          const locals = (response as ServerResponse & { locals: { auth?: { workspaceId: string } } }).locals;
          const [path, query] = splitUrl(req.originalUrl ?? req.url ?? '');
          const method = req.method ?? 'GET';
          const operation = operationOf(method.toLowerCase(), path);
          if (operation) span.setAttribute('operation', operation.operationId);
          if (locals.auth) span.setAttribute('workspace.id', locals.auth.workspaceId);
          const route = operation?.route ?? (req.route ? `${req.baseUrl ?? ''}${req.route.path}` : unmatched(path));
          span.setAttributes({ 'url.path': route, 'http.route': route });
          if (query !== undefined) span.setAttribute('url.query', redactedQuery(query));
          span.updateName(`${method} ${route}`);
        },
      }),
      new ExpressInstrumentation(),
      new PgInstrumentation(),
    ],
  });
  sdk.start();
  const tracer = trace.getTracer('outreach-api-worker');
  return {
    jobRun(job, run) {
      // A root span: a run is its own trace, not a child of whatever was active.
      return tracer.startActiveSpan(
        `worker ${job}`,
        { root: true, attributes: { 'worker.job': job } },
        async (span) => {
          try {
            const did = await run();
            span.setAttribute('worker.items', did);
            return did;
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: SpanStatusCode.ERROR });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
    shutdown: () => sdk.shutdown(),
  };
}
