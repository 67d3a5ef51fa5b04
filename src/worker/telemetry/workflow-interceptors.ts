// Runs in the workflow sandbox: bundled into the workflow code (as a workflow interceptors module) only when tracing is
// on. This first import gives the sandbox the `performance` the OpenTelemetry SDK reads, from workflow time.
import '@temporalio/interceptors-opentelemetry/lib/workflow/runtime.js';
import { context, isSpanContextValid, SpanStatusCode, trace, type Context, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  extractContextFromHeaders,
  headersWithContext,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import { ContextManager } from '@temporalio/interceptors-opentelemetry/lib/workflow/context-manager.js';
import { SpanExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter.js';
import {
  ContinueAsNew,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type DisposeInput,
  type GetLogAttributesInput,
  type LocalActivityInput,
  type Next,
  type SignalInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/*
 * Why not Temporal's own workflow interceptors (`@temporalio/interceptors-opentelemetry/lib/workflow-interceptors`):
 * they wrap each run, handler and scheduled activity in `async` functions, so the workflow's code resumes a few
 * microtasks later than without them, and in histories recorded without them some commands come out in another order
 * (an update's completion before a timer: every approval history of release 0.1.0 fails to replay). Turning tracing on
 * must not change what a workflow does, so these interceptors only read and write headers and open spans, and hand
 * back the very promise they were given: no extra await anywhere. Their spans and headers are those of Temporal's
 * (same header, same span export through the `exporter` sink), so the activity and client interceptors continue them.
 */

let contextManager: ContextManager | undefined;
let tracer: Tracer | undefined;

/** The sandbox's tracer: spans leave through the `exporter` sink, which is not called while a workflow replays. */
function workflowTracer(): Tracer {
  if (tracer === undefined) {
    contextManager = new ContextManager();
    const provider = new BasicTracerProvider();
    provider.addSpanProcessor(new SimpleSpanProcessor(new SpanExporter()));
    provider.register({ contextManager });
    tracer = provider.getTracer('@temporalio/interceptor-workflow');
  }
  return tracer;
}

/** Run `work` in the context a message's headers carry (the client's span), if they carry one. */
function inHeadersContext<T>(headers: UpdateInput['headers'], work: () => T): T {
  const carried: Context | undefined = extractContextFromHeaders(headers);
  return carried === undefined ? work() : context.with(carried, work);
}

class TracingInbound implements WorkflowInboundCallsInterceptor {
  private readonly tracer = workflowTracer();

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const parent = extractContextFromHeaders(input.headers) ?? context.active();
    const info = workflowInfo();
    const span = this.tracer.startSpan(
      `RunWorkflow:${info.workflowType}`,
      { attributes: { temporalWorkflowId: info.workflowId, run_id: info.runId } },
      parent,
    );
    const running = context.with(trace.setSpan(parent, span), () => next(input));
    running.then(
      () => span.end(),
      (error: unknown) => {
        if (!(error instanceof ContinueAsNew)) span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
        span.end();
      },
    );
    return running;
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    return inHeadersContext(input.headers, () => next(input));
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    return inHeadersContext(input.headers, () => next(input));
  }
}

class TracingOutbound implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return next({ ...input, headers: headersWithContext(input.headers) });
  }

  scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    return next({ ...input, headers: headersWithContext(input.headers) });
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return next({ ...input, headers: headersWithContext(input.headers) });
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>) {
    const spanContext = trace.getSpan(context.active())?.spanContext();
    if (spanContext === undefined || !isSpanContextValid(spanContext)) return next(input);
    return next({ trace_id: spanContext.traceId, span_id: spanContext.spanId, ...input });
  }
}

class TracingInternals implements WorkflowInternalsInterceptor {
  dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>): void {
    contextManager?.disable();
    next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new TracingInbound()],
  outbound: [new TracingOutbound()],
  internals: [new TracingInternals()],
});
