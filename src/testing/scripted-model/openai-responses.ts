import type { JsonObject } from '../../shared/types.js';
import type { CompletionStep, ResponseContext } from './response.js';
// One namespace: the scripted answer's parts, shared by every format.
import * as scripted from './response.js';
import { missingField, type WireFormat } from './wire-format.js';
import { scriptedCompactionContent } from './context-management.js';

/**
 * OpenAI's Responses API (`POST /v1/responses`), as the `openai` client reads it: output items (reasoning with
 * encrypted content, message, function_call), a `completed` or `incomplete` status, usage with cached tokens, the
 * streamed `response.*` events, and OpenAI-style error bodies.
 */

/** The encrypted content the scripted model gives a reasoning item: derived from its text, so a test can check it came back. */
export function encryptedReasoning(reasoning: string): string {
  return `enc_${scripted.digest('reasoning', reasoning)}`;
}

function responseId(context: ResponseContext): string {
  return `resp_${scripted.digest('response', context.conversation, context.stepIndex)}`;
}

function outputItems(step: CompletionStep, context: ResponseContext): JsonObject[] {
  const key = (kind: string, index = 0) => scripted.digest(kind, context.conversation, context.stepIndex, index);
  const items: JsonObject[] = [];
  // A compaction comes first: the model answered from the compacted input.
  if (context.managed?.compaction !== undefined) {
    items.push({
      type: 'compaction',
      id: `cmp_${key('compaction')}`,
      encrypted_content: scriptedCompactionContent(context.managed.compaction),
    });
  }
  if (step.reasoning !== undefined) {
    items.push({
      type: 'reasoning',
      id: `rs_${key('reasoning')}`,
      summary: [{ type: 'summary_text', text: step.reasoning }],
      encrypted_content: encryptedReasoning(step.reasoning),
    });
  }
  if (step.content !== undefined) {
    items.push({
      type: 'message',
      id: `msg_${key('message')}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: step.content, annotations: [] }],
    });
  }
  scripted.toolCallsOf(step, context).forEach((call, index) => {
    items.push({
      type: 'function_call',
      id: `fc_${key('function-call', index)}`,
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    });
  });
  return items;
}

function response(step: CompletionStep, context: ResponseContext, output: JsonObject[]): JsonObject {
  const usage = scripted.scriptedUsage(step, scripted.toolCallsOf(step, context), context);
  const finish = scripted.finishReasonOf(step);
  const incomplete = finish === 'length' ? 'max_output_tokens' : finish === 'content_filter' ? 'content_filter' : null;
  return {
    id: responseId(context),
    object: 'response',
    created_at: context.created,
    model: context.model,
    status: incomplete ? 'incomplete' : 'completed',
    incomplete_details: incomplete ? { reason: incomplete } : null,
    error: null,
    output,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
      total_tokens: usage.total,
    },
  };
}

export const openAIResponses: WireFormat = {
  api: 'responses',
  framing: { namedEvents: true, done: false },
  carriesText: (event) => (event as { type?: unknown }).type === 'response.output_text.delta',
  problem(body) {
    const missing = missingField(body, { model: 'string' });
    if (missing) return `Missing required parameter: '${missing.name}'.`;
    if (typeof body.input !== 'string' && !Array.isArray(body.input)) return "Missing required parameter: 'input'.";
    return undefined;
  },
  answer: (step, context) => response(step, context, outputItems(step, context)),
  events(step, context) {
    const events: JsonObject[] = [];
    const push = (event: JsonObject) => events.push({ ...event, sequence_number: events.length });
    push({ type: 'response.created', response: { ...response(step, context, []), status: 'in_progress' } });
    outputItems(step, context).forEach((item, output_index) => {
      const item_id = item.id as string;
      if (item.type === 'message') {
        push({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, content: [], status: 'in_progress' },
        });
        const text = step.content ?? '';
        for (const delta of scripted.splitContent(text)) {
          push({ type: 'response.output_text.delta', item_id, output_index, content_index: 0, delta, logprobs: [] });
        }
        push({ type: 'response.output_text.done', item_id, output_index, content_index: 0, text, logprobs: [] });
      } else if (item.type === 'function_call') {
        push({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, arguments: '', status: 'in_progress' },
        });
        for (const delta of scripted.splitArguments(item.arguments as string)) {
          push({ type: 'response.function_call_arguments.delta', item_id, output_index, delta });
        }
        push({
          type: 'response.function_call_arguments.done',
          item_id,
          output_index,
          arguments: item.arguments as string,
        });
      } else {
        push({ type: 'response.output_item.added', output_index, item });
      }
      push({ type: 'response.output_item.done', output_index, item });
    });
    const final = response(step, context, outputItems(step, context));
    push({ type: final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: final });
    return events;
  },
  errorBody: (_status, message, type, code) => scripted.errorBody(message, type, code),
  scriptedErrorBody: scripted.scriptedErrorBody,
};
