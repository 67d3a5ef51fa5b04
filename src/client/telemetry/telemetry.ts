import { readTelemetrySettings, type TelemetrySettings } from './settings.js';
import { startTracing, type Tracing } from './tracing.js';

/** Telemetry of one process: what the environment asked for, and the tracer provider if traces were. */
export interface Telemetry {
  settings: TelemetrySettings;
  tracing: Tracing | undefined;
}

/**
 * Telemetry as the environment asks for it (docs/observability.md): `undefined` when no OTLP endpoint is set, and
 * then nothing starts. A worker, a client, the CLI and `serve` call this once each; the tracer provider is shared.
 * It lives apart from the worker's part so that a client-only import loads no worker code.
 */
export function startTelemetry(env: Record<string, string | undefined> = process.env): Telemetry | undefined {
  const settings = readTelemetrySettings(env);
  return settings === undefined ? undefined : { settings, tracing: startTracing(settings) };
}
