import { readTelemetrySettings } from './settings.js';
import { startTracing } from './tracing.js';
import type { Telemetry } from './worker-telemetry.js';

export { activitySpans, type ActivitySpanOptions } from './activity-spans.js';
export { readTelemetrySettings, type TelemetrySettings } from './settings.js';
export { clientTelemetryInterceptors } from './client-telemetry.js';
export { startTracing, TRACER_NAME, type Tracing } from './tracing.js';
export {
  runtimeTelemetryOptions,
  WORKFLOW_TRACING_INTERCEPTORS,
  workerTelemetry,
  type Telemetry,
} from './worker-telemetry.js';

/**
 * Telemetry as the environment asks for it (docs/observability.md): `undefined` when no OTLP endpoint is set, and
 * then nothing starts. A worker, a client, the CLI and `serve` call this once each; the tracer provider is shared.
 */
export function startTelemetry(env: Record<string, string | undefined> = process.env): Telemetry | undefined {
  const settings = readTelemetrySettings(env);
  return settings === undefined ? undefined : { settings, tracing: startTracing(settings) };
}
