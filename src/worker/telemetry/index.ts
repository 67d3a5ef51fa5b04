export { activitySpans, type ActivitySpanOptions } from './activity-spans.js';
export { readTelemetrySettings, type TelemetrySettings } from '../../client/telemetry/settings.js';
export { clientTelemetryInterceptors } from '../../client/telemetry/client-telemetry.js';
export { startTracing, TRACER_NAME, type Tracing } from '../../client/telemetry/tracing.js';
export { runtimeTelemetryOptions, WORKFLOW_TRACING_INTERCEPTORS, workerTelemetry } from './worker-telemetry.js';
export { startTelemetry, type Telemetry } from '../../client/telemetry/telemetry.js';
