import { createRequire } from 'node:module';
import type * as TemporalTelemetry from '@temporalio/interceptors-opentelemetry';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { Client } from '@temporalio/client';
import type { InjectedSinks, RuntimeOptions, WorkerInterceptors, WorkerPlugin } from '@temporalio/worker';
import { activitySpans, type ActivitySpanOptions } from './activity-spans.js';
import { conversationGaugePlugin } from './conversation-gauge.js';
import type { TelemetrySettings } from '../../client/telemetry/settings.js';
import type { Telemetry } from '../../client/telemetry/telemetry.js';

/**
 * The workflow interceptors bundled into the workflow code when tracing is on (`workflow-interceptors.ts`, `.js` once
 * built): a span per run, the client's trace context into the handlers, the turn's into each activity's headers. They
 * neither emit a command nor add an await, so histories recorded without them replay with them (test/replay).
 */
export const WORKFLOW_TRACING_INTERCEPTORS = new URL(
  `./workflow-interceptors${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
).pathname;

/** Temporal's interceptors are loaded with tracing only (a CommonJS package: `require` gives what `import` would). */
const load = createRequire(import.meta.url);

/**
 * The worker's part: Temporal's activity interceptors (the `RunActivity` span, continuing the workflow's trace), ours
 * (the GenAI spans, metrics and log ids), and the sink through which workflow spans leave the sandbox. Without
 * tracing, only our metrics and log ids. With metrics, a plugin that counts conversations by status through `client`
 * while the worker runs.
 */
export function workerTelemetry(
  telemetry: Telemetry,
  spans: ActivitySpanOptions,
  client: Client,
): {
  interceptors: WorkerInterceptors;
  sinks: InjectedSinks<OpenTelemetrySinks> | undefined;
  workflowInterceptorModules: string[];
  plugins: WorkerPlugin[];
} {
  const ours = activitySpans({ ...spans, captureContent: telemetry.settings.captureContent });
  const { tracing, settings } = telemetry;
  const plugins =
    settings.metricsUrl === undefined
      ? []
      : [conversationGaugePlugin({ client, intervalMs: settings.conversationsIntervalMs })];
  if (tracing === undefined)
    return { interceptors: { activity: [ours] }, sinks: undefined, workflowInterceptorModules: [], plugins };
  const { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } =
    load('@temporalio/interceptors-opentelemetry') as typeof TemporalTelemetry;
  return {
    plugins,
    interceptors: {
      // Temporal's first: its inbound interceptor makes the `RunActivity` span that ours nest under.
      activity: [
        (activity) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(activity),
          outbound: new OpenTelemetryActivityOutboundInterceptor(activity),
        }),
        ours,
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
    workflowInterceptorModules: [WORKFLOW_TRACING_INTERCEPTORS],
  };
}

/**
 * The Temporal Runtime's metrics exporter: its own metrics (`temporal_*`: task latencies, slots, polls) and what the
 * workflows and activities record on its meter (durable-agent's) go to the same OTLP/HTTP endpoint.
 */
export function runtimeTelemetryOptions(settings: TelemetrySettings | undefined): RuntimeOptions['telemetryOptions'] {
  if (settings?.metricsUrl === undefined) return undefined;
  return {
    metrics: {
      otel: { url: settings.metricsUrl, http: true, metricsExportInterval: settings.metricsIntervalMs },
      globalTags: { 'service.name': settings.serviceName },
    },
  };
}
