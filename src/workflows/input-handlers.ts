import { condition, type setHandler } from '@temporalio/workflow';
import type { ConversationCore } from './conversation-core.js';
import { answerInputUpdate, handlerDescriptions, requestInputUpdate } from './definitions.js';
import type { InputAnswer } from '../shared/input-messages.js';

/**
 * Wire a run's questions from MCP servers (elicitation, ./input-requests.ts) to Temporal: the tool activity's internal
 * `requestInput` long poll and the public `answerInput` update.
 */
export function handleInputRequests(
  conversation: ConversationCore,
  /** The run's `setHandler` (./undecodable-guard.ts). */
  on: typeof setHandler,
): void {
  const { inputs } = conversation;
  on(
    requestInputUpdate,
    (poll) => inputs.poll(poll, conversation.runningTurn, (ready, timeoutMs) => condition(ready, timeoutMs)),
    { description: handlerDescriptions.requestInput },
  );
  on(answerInputUpdate, (answer) => inputs.answer(answer), {
    validator: (answer: InputAnswer) => inputs.validateAnswer(answer),
    description: handlerDescriptions.answerInput,
  });
}
