/**
 * OpenTelemetry traces, started only when OTEL_EXPORTER_OTLP_ENDPOINT is set (preload.ts decides, before
 * express and pg are first required, so their instrumentations can patch them). The standard Node SDK with the
 * HTTP, Express and pg instrumentations: one trace per request (its server span carries the workspace id and
 * the operation) and one per worker run. Spans go to `<endpoint>/v1/traces` as OTLP/HTTP JSON; the usual OTEL_*
 * variables (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_BSP_SCHEDULE_DELAY, ...) apply.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { redactUrl } from '../http/redact';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { readBundledSpec } from '../project-root';
import { operationMatcher } from './operations';

export interface Tracing {
  /** Runs one worker job pass in a trace of its own. */
  jobRun(job: string, run: () => Promise<number>): Promise<number>;
  shutdown(): Promise<void>;
}

export function startTracing(): Tracing {
  const operationOf = operationMatcher(readBundledSpec());
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || 'outreach-api',
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      new HttpInstrumentation({
        // Attributes are set when the response ends: by then the key has named the workspace.
        applyCustomAttributesOnSpan(span: Span, request, response) {
          if (!('locals' in response)) return;
          const req = request as IncomingMessage & { originalUrl?: string; method?: string };
          const locals = (response as ServerResponse & { locals: { auth?: { workspaceId: string } } }).locals;
          const operation = operationOf(
            (req.method ?? 'get').toLowerCase(),
            (req.originalUrl ?? req.url ?? '').split('?')[0],
          );
          if (operation) span.setAttribute('operation', operation);
          // An OAuth callback's code and state are credentials: the recorded target and URL lose their values.
          const target = req.originalUrl ?? req.url ?? '';
          if (redactUrl(target) !== target) {
            span.setAttribute('http.target', redactUrl(target));
            span.setAttribute('http.url', redactUrl(`http://${req.headers.host ?? ''}${target}`));
          }
          if (locals.auth) span.setAttribute('workspace.id', locals.auth.workspaceId);
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
