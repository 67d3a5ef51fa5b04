import { trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { packageVersion } from '../shared/package-version.js';
import type { TelemetrySettings } from './settings.js';

/** The instrumentation scope of durable-agent's own spans (turns, model calls, tool calls). */
export const TRACER_NAME = 'durable-agent';

/** A started tracer provider: what the worker's interceptors and sinks need, and how to flush it. */
export interface Tracing {
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Export what is buffered now (a test reads it; a CLI command ends). */
  flush(): Promise<void>;
  /** Flush, then stop exporting. */
  shutdown(): Promise<void>;
}

let started: Tracing | undefined;

/**
 * Start the process's tracer provider once (every worker, client and command of the process shares it): OTLP/HTTP to
 * `settings.tracesUrl`, batched, registered as the global provider with W3C trace context propagation, which is what
 * Temporal's interceptors inject into and extract from headers. Returns `undefined` when traces are not asked for.
 */
export function startTracing(settings: TelemetrySettings): Tracing | undefined {
  if (settings.tracesUrl === undefined) return undefined;
  if (started !== undefined) return started;
  const resource = new Resource({ 'service.name': settings.serviceName, 'service.version': packageVersion() });
  const exporterOptions = { url: settings.tracesUrl };
  const exporter =
    settings.tracesProtocol === 'http/json'
      ? new JsonTraceExporter(exporterOptions)
      : new ProtobufTraceExporter(exporterOptions);
  const spanProcessor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager() });
  const tracing: Tracing = {
    resource,
    spanProcessor,
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      started = undefined;
    },
  };
  started = tracing;
  return tracing;
}
