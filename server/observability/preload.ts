/**
 * The first import of main.ts and worker-main.ts: starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set, before
 * anything requires express or pg (instrumentations patch modules as they load). Unset, nothing of
 * OpenTelemetry is loaded.
 */
import type { Tracing } from './tracing';

export const tracing: Tracing | null = process.env.OTEL_EXPORTER_OTLP_ENDPOINT
  ? // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./tracing') as typeof import('./tracing')).startTracing()
  : null;
