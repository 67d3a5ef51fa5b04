import { condition, isCancellation } from '@temporalio/workflow';
import type {
  CallToolInput,
  CallToolInputRequired,
  CallToolResult,
  ToolCall,
  ToolDefinition,
  ToolMessage,
  ToolQuestion,
  ToolQuestionAnswer,
} from '../shared/types.js';
import type { CallToolTaskCreated } from '../shared/tool-tasks.js';
import { toolMessage } from './tool-calls.js';
import type { TimeLimit } from './turn-approvals.js';
import type { TurnContext } from './turn-context.js';

/**
 * A 2026-07-28 server's questions as durable waits (docs/mcp.md, "Questions from servers"). The server answers a tool
 * call `input_required`; the tool activity ends and returns the questions; the turn records them as the
 * conversation's pending inputs and waits for the person with `condition()`: no activity is open, no timer runs and
 * the turn's time limit is paused, as for an approval, so the wait may last days. Then the call is sent again, as a
 * new activity, with the answers and the server's `requestState`, for as many rounds as the server asks, at most
 * {@link MAX_QUESTION_ROUNDS}. Only a 2026-07-28 server returns `input_required`, so no recorded history takes this
 * path and it needs no patch.
 */

/**
 * How many times one call's server may ask before the call ends with an error for the model. The calls sent again
 * do not count against the turn's tool-call budget: the model made one call, and the budget counts the model's calls.
 */
export const MAX_QUESTION_ROUNDS = 10;

/** Sends the call (again, with a round's answers): a new `callTool` activity. */
export type SendAgain = (
  again:
    (Required<Pick<CallToolInput, 'inputRound'>> & Pick<CallToolInput, 'inputResponses' | 'requestState'>) | undefined,
) => Promise<CallToolResult | CallToolInputRequired | CallToolTaskCreated>;

/** Ask the person each round's questions and send the call again until the server answers it (or a limit ends it). */
export async function answerServerQuestions(
  context: TurnContext,
  limit: TimeLimit,
  { call, tool }: { call: ToolCall; tool: ToolDefinition },
  first: CallToolInputRequired,
  sendAgain: SendAgain,
): Promise<CallToolResult | CallToolTaskCreated | ToolMessage> {
  let asked = first;
  for (let round = 1; ; round++) {
    if (round > MAX_QUESTION_ROUNDS) return QUESTION_RESULTS.tooManyRounds(call, tool);
    const answered = await askThePerson(context, limit, call, tool.server, round, asked.questions);
    if (answered.kind === 'message') return answered.message;
    const result = await sendAgain({
      inputRound: round + 1,
      ...(Object.keys(answered.responses).length > 0 ? { inputResponses: answered.responses } : {}),
      ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}),
    });
    if (result.outcome !== 'input_required') return result;
    asked = result;
  }
}

type Answered =
  { kind: 'answers'; responses: Record<string, ToolQuestionAnswer> } | { kind: 'message'; message: ToolMessage };

/**
 * One round: the questions become pending inputs (status phase `awaiting_input`, the `inputs` query, the
 * `input_requested` event) and the turn waits for every answer. Request ids name the call, the turn and the round, so
 * concurrent calls' questions and every round's are told apart.
 */
async function askThePerson(
  context: TurnContext,
  limit: TimeLimit,
  call: ToolCall,
  server: string,
  round: number,
  questions: readonly ToolQuestion[],
): Promise<Answered> {
  const asked = questions.map(({ key, ...question }) => {
    const requestId = `${call.id}:${context.turn}.${round}:${key}`;
    context.inputs.ask({ requestId, callId: call.id, tool: call.name, server, ...question }, context.turn);
    return { key, requestId };
  });
  limit.pause();
  try {
    await condition(() => asked.every(({ requestId }) => context.inputs.answerOf(requestId) !== undefined));
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return { kind: 'message', message: interruptedMessage(call, limit) };
  } finally {
    limit.resume();
  }
  // An interrupt answers the questions `cancel` in the activation that cancels the turn: the call is not sent again.
  if (context.observer.interrupted()) return { kind: 'message', message: interruptedMessage(call, limit) };
  const responses: Record<string, ToolQuestionAnswer> = {};
  for (const { key, requestId } of asked) {
    const { action, content } = context.inputs.answerOf(requestId)!;
    responses[key] = content === undefined ? { action } : { action, content };
  }
  return { kind: 'answers', responses };
}

function interruptedMessage(call: ToolCall, limit: TimeLimit): ToolMessage {
  return limit.timedOut ? QUESTION_RESULTS.outOfTime(call) : QUESTION_RESULTS.interrupted(call);
}

/** A call ended without a result from its server: the model reads why, and that it was not sent again. */
function notSentAgain(call: ToolCall, outcome: ToolMessage['outcome'], why: string): ToolMessage {
  return toolMessage(call, outcome, `${why}; it was not sent again and has no result.`);
}

const OUT_OF_TIME = "The turn's time budget ran out while this call waited for its server's questions";

export const QUESTION_RESULTS = {
  tooManyRounds: (call: ToolCall, tool: Pick<ToolDefinition, 'server'>) =>
    notSentAgain(
      call,
      'error',
      `Error: MCP server "${tool.server}" asked the person more than ${MAX_QUESTION_ROUNDS} rounds of questions ` +
        `during this call to ${call.name}`,
    ),
  interrupted: (call: ToolCall) =>
    notSentAgain(call, 'cancelled', "The user interrupted the turn while this call waited for its server's questions"),
  outOfTime: (call: ToolCall) => notSentAgain(call, 'budget_exhausted', OUT_OF_TIME),
} as const;
