/**
 * The first import of main.ts and worker-main.ts: starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set, before
 * anything requires express or pg (instrumentations patch modules as they load). Unset, nothing of
 * OpenTelemetry is loaded.
 */
import type { Tracing } from './tracing';

// A require, not import(): the SDK must start before this file returns, and main.ts's next imports load express and
// pg; an import() would resolve after them, too late to patch them.
export const tracing: Tracing | null = process.env.OTEL_EXPORTER_OTLP_ENDPOINT
  ? // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./tracing') as typeof import('./tracing')).startTracing()
  : null;
