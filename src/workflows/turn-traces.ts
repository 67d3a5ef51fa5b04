import { context, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { metricMeter } from '@temporalio/workflow';
import type { TurnResult } from './turn-result.js';
import { setWaitParent } from './wait-metrics.js';

/**
 * The `turn` span of each turn and the turn metrics (docs/observability.md). Without tracing the API is a no-op. With
 * it, Temporal's workflow interceptors have registered a tracer in this sandbox that exports through a sink, and a sink
 * is not called while a workflow replays: a turn replayed after a crash or an eviction is exported once, when it ends,
 * with the ids it had (span ids come from the workflow's seeded random numbers). Nothing here emits a command.
 *
 * A message waits in the queue between the handler that received it and its turn; the context it arrived in (the
 * client's span, carried in Temporal's headers) is kept by message id so the turn continues the client's trace.
 */
export class TurnTraces {
  private readonly arrivedIn = new Map<string, Context>();
  private readonly tracer = trace.getTracer('durable-agent');
  private readonly turns = metricMeter.createCounter('durable_agent.turns', '{turn}', 'Turns by stop reason');
  private readonly durations = metricMeter.createHistogram(
    'durable_agent.turn.duration',
    'float',
    's',
    'Duration of turns, from the first model call to the result (workflow time)',
  );

  /** Call in the handler that receives the message, while its context is the active one. */
  arrived(messageId: string | undefined): void {
    // A message without an id is refused by the handler itself; it has no turn to trace.
    if (typeof messageId === 'string' && !this.arrivedIn.has(messageId))
      this.arrivedIn.set(messageId, context.active());
  }

  /** Open the turn's span, a child of the span the message arrived in (else of the run's). */
  start(turn: { conversationId: string; turn: number; messageId: string }): { span: Span; context: Context } {
    const parent = this.arrivedIn.get(turn.messageId) ?? context.active();
    this.arrivedIn.delete(turn.messageId);
    const span = this.tracer.startSpan(
      `turn ${turn.turn}`,
      {
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.conversation.id': turn.conversationId,
          'durable_agent.turn': turn.turn,
          'durable_agent.message.id': turn.messageId,
        },
      },
      parent,
    );
    const turnContext = trace.setSpan(parent, span);
    // The turn's waits (approvals, questions) are its children, even those begun in an update handler.
    setWaitParent(turnContext);
    return { span, context: turnContext };
  }

  /** Run `work` with the turn's span active, so the activities it schedules are its children. */
  within<T>(started: { context: Context }, work: () => T): T {
    return context.with(started.context, work);
  }

  /** Close the turn's span with what stopped it, and count the turn. */
  finish(started: { span: Span }, result: TurnResult): void {
    const { span } = started;
    setWaitParent(undefined);
    span.setAttributes({
      'durable_agent.stop_reason': result.stopReason,
      'durable_agent.rounds': result.rounds,
      'durable_agent.tool_calls': result.toolCalls,
      'gen_ai.usage.input_tokens': result.usage.inputTokens,
      'gen_ai.usage.output_tokens': result.usage.outputTokens,
    });
    if (result.error !== undefined) {
      span.setAttribute('error.type', result.error.type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.error.type });
    }
    span.end();
    this.turns.add(1, { stop_reason: result.stopReason });
    this.durations.record(result.durationMs / 1000, { stop_reason: result.stopReason });
  }
}
