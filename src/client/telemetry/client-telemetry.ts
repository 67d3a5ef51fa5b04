import { createRequire } from 'node:module';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type * as ClientInterceptors from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import type { Telemetry } from './telemetry.js';

/** Loaded with tracing only (a CommonJS package: `require` gives the module an `import` would). */
const load = createRequire(import.meta.url);

/**
 * The client's part: Temporal's client interceptor opens a span for each start, signal, update and query and puts its
 * context in the call's headers, where the workflow's interceptors continue the trace. None without tracing.
 */
export function clientTelemetryInterceptors(telemetry: Telemetry | undefined): WorkflowClientInterceptor[] {
  if (telemetry?.tracing === undefined) return [];
  const { OpenTelemetryWorkflowClientInterceptor } = load(
    '@temporalio/interceptors-opentelemetry/lib/client/index.js',
  ) as typeof ClientInterceptors;
  return [new OpenTelemetryWorkflowClientInterceptor()];
}
