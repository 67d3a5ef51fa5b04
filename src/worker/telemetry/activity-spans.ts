import {
  context,
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { MetricMeter } from '@temporalio/common';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptors,
  ActivityOutboundCallsInterceptor,
  GetLogAttributesInput,
  Next,
} from '@temporalio/worker';
import { Redactor } from '../../shared/redaction.js';
import type { CallToolInput, CallToolResult, ModelCallInput, ModelCallResult } from '../../shared/types.js';
import { conversationIdOf } from '../../workflows/definitions.js';
import { parseModelName, ProviderName } from '../activities/model/providers/provider.js';
import { TRACER_NAME } from '../../client/telemetry/tracing.js';

/** What the model and tool spans need to know that the activity's input does not say. */
export interface ActivitySpanOptions {
  /** The model a call without its own goes to (the worker's `defaultModel`). */
  defaultModel: string;
  /**
   * `gen_ai.provider.name` of Chat Completions calls; default `openai`. Models named `anthropic:` and
   * `openai-responses:` name their own.
   */
  provider?: string;
  /** Put prompts, answers, arguments and results on spans, redacted with `secrets`. Default false. */
  captureContent?: boolean;
  secrets?: Redactor;
}

/** The semantic conventions' name of each API's provider; Chat Completions is whatever endpoint the worker uses. */
const PROVIDER_NAMES: Record<ProviderName, string | undefined> = {
  [ProviderName.ChatCompletions]: undefined,
  [ProviderName.Anthropic]: 'anthropic',
  [ProviderName.OpenAIResponses]: 'openai',
};

/** One activity execution: the ids its logs carry, found in its input and its trace. */
interface CallIds {
  conversation_id?: string;
  turn?: number;
  round?: number;
  tool_call_id?: string;
  trace_id?: string;
  span_id?: string;
}

/**
 * Activity interceptors that give each model call a GenAI `chat` span and each tool call an `execute_tool` span (children
 * of Temporal's `RunActivity` span, so of the turn), record their latency, tokens and outcome as metrics on the
 * worker's Temporal metric meter, and put the conversation, turn, round and call ids on every line the activity logs.
 * The activities themselves know nothing of telemetry: all of it reads their input and result here.
 */
export function activitySpans(options: ActivitySpanOptions): (activity: ActivityContext) => ActivityInterceptors {
  // Content leaves the worker only redacted: with the worker's secrets, else with the environment's.
  const content =
    options.captureContent === true ? (options.secrets ?? new Redactor().addEnvironment(process.env)) : undefined;
  const redacted = (value: unknown) => JSON.stringify(content?.value(value));
  return (activity) => {
    const ids: CallIds = {};
    const inbound: ActivityInboundCallsInterceptor = {
      execute: async (input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) => {
        const { activityType, attempt } = activity.info;
        const meter = activity.metricMeter;
        // The attempt's span (Temporal's `RunActivity`): the SDK logs "Activity failed" after the span's context is
        // gone, so the ids are kept for every line of the attempt.
        const traced = trace.getSpanContext(context.active());
        if (traced !== undefined && isSpanContextValid(traced)) {
          Object.assign(ids, { trace_id: traced.traceId, span_id: traced.spanId });
        }
        if (activityType === 'callModel' || activityType === 'summarizeTranscript') {
          const call = input.args[0] as ModelCallInput;
          Object.assign(ids, {
            conversation_id: conversationIdOf(call.workflowId),
            turn: call.turn,
            round: call.round,
          });
          // The conversation's name may carry the provider's prefix (`anthropic:`): the span names both apart.
          const requestModel = parseModelName(call.model ?? options.defaultModel);
          const attributes: Attributes = {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': PROVIDER_NAMES[requestModel.provider] ?? options.provider ?? 'openai',
            'gen_ai.request.model': requestModel.model,
            'gen_ai.conversation.id': ids.conversation_id,
            'durable_agent.turn': call.turn,
            'durable_agent.round': call.round,
            'durable_agent.attempt': attempt,
            ...tenantOf(activity),
          };
          if (content !== undefined) attributes['gen_ai.input.messages'] = redacted(call.newMessages);
          return await measured(
            `chat ${requestModel.model}`,
            SpanKind.CLIENT,
            attributes,
            meter,
            next,
            input,
            modelSeen,
          );
        }
        if (activityType === 'callTool') {
          const call = input.args[0] as CallToolInput;
          Object.assign(ids, {
            conversation_id:
              activity.info.workflowExecution === undefined
                ? undefined
                : conversationIdOf(activity.info.workflowExecution.workflowId),
          });
          ids.tool_call_id = call.toolCallId;
          const attributes: Attributes = {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': call.tool.name,
            'gen_ai.tool.call.id': call.toolCallId,
            'gen_ai.tool.type': 'function',
            'gen_ai.conversation.id': ids.conversation_id,
            'durable_agent.tool.server': call.tool.server,
            'durable_agent.attempt': attempt,
            ...tenantOf(activity),
          };
          if (content !== undefined) attributes['gen_ai.tool.call.arguments'] = redacted(call.arguments);
          return await measured(
            `execute_tool ${call.tool.name}`,
            SpanKind.INTERNAL,
            attributes,
            meter,
            next,
            input,
            toolSeen,
          );
        }
        return await next(input);
      },
    };
    const outbound: ActivityOutboundCallsInterceptor = {
      getLogAttributes: (
        input: GetLogAttributesInput,
        next: Next<ActivityOutboundCallsInterceptor, 'getLogAttributes'>,
      ) => next({ ...withoutUndefined(ids), ...input }),
    };
    return { inbound, outbound };
  };

  /** The model call's answer on its span, and its tokens as metrics. */
  function modelSeen(span: Span, result: unknown, meter: MetricMeter, tags: Record<string, string>): void {
    const { usage, model, finishReason, cost, message } = result as ModelCallResult;
    // A call to a model without a known price has no dollars to report (docs/cost.md), not zero.
    const costUsd = cost?.priced ? cost.usd : undefined;
    span.setAttributes({
      'gen_ai.response.model': model,
      'gen_ai.response.finish_reasons': [finishReason],
      'gen_ai.usage.input_tokens': usage.inputTokens,
      'gen_ai.usage.output_tokens': usage.outputTokens,
    });
    if (usage.cacheReadTokens !== undefined)
      span.setAttribute('gen_ai.usage.cache_read.input_tokens', usage.cacheReadTokens);
    if (usage.cacheWriteTokens !== undefined)
      span.setAttribute('gen_ai.usage.cache_creation.input_tokens', usage.cacheWriteTokens);
    if (usage.reasoningTokens !== undefined)
      span.setAttribute('gen_ai.usage.reasoning.output_tokens', usage.reasoningTokens);
    if (costUsd !== undefined) span.setAttribute('durable_agent.cost.usd', costUsd);
    if (content !== undefined) span.setAttribute('gen_ai.output.messages', redacted([message]));
    const tokens = meter.createHistogram('gen_ai.client.token.usage', 'int', '{token}', 'Tokens per model call');
    const withModel = { ...tags, 'gen_ai.response.model': model };
    tokens.record(usage.inputTokens, { ...withModel, 'gen_ai.token.type': 'input' });
    tokens.record(usage.outputTokens, { ...withModel, 'gen_ai.token.type': 'output' });
    if (costUsd !== undefined) {
      meter.createCounter('durable_agent.cost', 'USD', 'Cost of model calls in dollars').add(costUsd, withModel);
    }
  }

  function toolSeen(span: Span, result: unknown): void {
    const { outcome, content: text, truncated } = result as CallToolResult;
    span.setAttributes({ 'durable_agent.tool.outcome': outcome, 'durable_agent.tool.truncated': truncated });
    if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: `tool outcome: ${outcome}` });
    if (content !== undefined) span.setAttribute('gen_ai.tool.call.result', redacted(text));
  }
}

/** The metric and span attribute of a call's tenant. */
const TENANT_ATTRIBUTE = 'durable_agent.tenant';

/** The tenant of the call: its fairness key, which the call inherits from its conversation (docs/tenants.md). */
function tenantOf(activity: ActivityContext): Attributes {
  const tenant = activity.info.priority?.fairnessKey;
  return tenant ? { [TENANT_ATTRIBUTE]: tenant } : {};
}

/**
 * Run the activity inside a span named `name`, then record its duration (`gen_ai.client.operation.duration` for model
 * calls, `durable_agent.tool.duration` for tools) tagged with its outcome. A failed attempt ends its span with the
 * error's type; Temporal retries it as a new attempt, with a span of its own.
 */
async function measured(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  meter: MetricMeter,
  next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  input: ActivityExecuteInput,
  seen: (span: Span, result: unknown, meter: MetricMeter, tags: Record<string, string>) => void,
): Promise<unknown> {
  const tracer = trace.getTracer(TRACER_NAME);
  const tool = attributes['gen_ai.operation.name'] === 'execute_tool';
  const tags: Record<string, string> = tool
    ? {
        'gen_ai.tool.name': String(attributes['gen_ai.tool.name']),
        'durable_agent.tool.server': String(attributes['durable_agent.tool.server']),
      }
    : {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': String(attributes['gen_ai.provider.name']),
        'gen_ai.request.model': String(attributes['gen_ai.request.model']),
      };
  // A tenant's calls carry its id in every metric (docs/tenants.md): spend and latency per tenant.
  const tenant = attributes[TENANT_ATTRIBUTE];
  if (typeof tenant === 'string') tags[TENANT_ATTRIBUTE] = tenant;
  const duration = tool
    ? meter.createHistogram('durable_agent.tool.duration', 'float', 's', 'Duration of tool call attempts')
    : meter.createHistogram('gen_ai.client.operation.duration', 'float', 's', 'Duration of model call attempts');
  const span = tracer.startSpan(name, { kind, attributes }, context.active());
  const started = performance.now();
  try {
    const result = await context.with(trace.setSpan(context.active(), span), () => next(input));
    seen(span, result, meter, tags);
    const outcome = tool ? (result as CallToolResult).outcome : 'ok';
    duration.record((performance.now() - started) / 1000, { ...tags, outcome });
    return result;
  } catch (error) {
    const type = errorType(error);
    span.setAttribute('error.type', type);
    if (tool) span.setAttribute('durable_agent.tool.outcome', 'failed');
    span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    duration.record((performance.now() - started) / 1000, { ...tags, outcome: 'failed', 'error.type': type });
    throw error;
  } finally {
    span.end();
  }
}

/** A failure's named type (an `ApplicationFailure`'s `type`, e.g. `ModelRateLimited`), else its class name. */
function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { type, name } = error as { type?: unknown; name?: unknown };
    if (typeof type === 'string' && type !== '') return type;
    if (typeof name === 'string' && name !== '') return name;
  }
  return 'Error';
}

function withoutUndefined(ids: CallIds): Record<string, unknown> {
  return Object.fromEntries(Object.entries(ids).filter(([, value]) => value !== undefined));
}
