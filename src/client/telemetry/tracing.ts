import { createRequire } from 'node:module';
import { trace } from '@opentelemetry/api';
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as JsonExporter from '@opentelemetry/exporter-trace-otlp-http';
import type * as ProtobufExporter from '@opentelemetry/exporter-trace-otlp-proto';
import type * as Resources from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { packageVersion } from '../../node/package-version.js';
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
 * The tracer provider and its exporters are loaded when traces are first asked for: they are some 200 modules that
 * every process importing durable-agent would otherwise load, and most run without tracing. They are CommonJS
 * packages only, so `require` gives the very modules an `import` of them would.
 */
const load = createRequire(import.meta.url);

/**
 * Start the process's tracer provider once (every worker, client and command of the process shares it): OTLP/HTTP to
 * `settings.tracesUrl`, batched, registered as the global provider with W3C trace context propagation, which is what
 * Temporal's interceptors inject into and extract from headers. Returns `undefined` when traces are not asked for.
 */
export function startTracing(settings: TelemetrySettings): Tracing | undefined {
  if (settings.tracesUrl === undefined) return undefined;
  if (started !== undefined) return started;
  const { AsyncLocalStorageContextManager } = load('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks;
  const { Resource } = load('@opentelemetry/resources') as typeof Resources;
  const { BasicTracerProvider, BatchSpanProcessor } = load('@opentelemetry/sdk-trace-base') as typeof TraceBase;
  const resource = new Resource({ 'service.name': settings.serviceName, 'service.version': packageVersion() });
  const exporterOptions = { url: settings.tracesUrl };
  const { OTLPTraceExporter } =
    settings.tracesProtocol === 'http/json'
      ? (load('@opentelemetry/exporter-trace-otlp-http') as typeof JsonExporter)
      : (load('@opentelemetry/exporter-trace-otlp-proto') as typeof ProtobufExporter);
  const exporter = new OTLPTraceExporter(exporterOptions);
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
