import type { WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import type { Telemetry } from './telemetry.js';

/**
 * The client's part: Temporal's client interceptor opens a span for each start, signal, update and query and puts its
 * context in the call's headers, where the workflow's interceptors continue the trace. None without tracing.
 */
export function clientTelemetryInterceptors(telemetry: Telemetry | undefined): WorkflowClientInterceptor[] {
  return telemetry?.tracing === undefined ? [] : [new OpenTelemetryWorkflowClientInterceptor()];
}
