import type { DurableAgentClient } from '../../src/client/index.js';
import { errorMessage } from '../../src/shared/errors.js';
import type { ScriptStep, ScriptToolCall, StepFunction } from '../../src/testing/scripted-model/index.js';
import type { ConversationSettings, ConversationStatus } from '../../src/workflows/definitions.js';
import { callsPerTool, until } from './helpers.js';

/**
 * The states a conversation can be in when a deploy replaces its worker, for upgrade.reliability.ts: each is reached on
 * the old release's worker, then let go on today's. Every state has an MCP server of its own (named after the state),
 * so each counts its own tool runs and no two tool calls share a server session (a server's question is matched to the
 * one call in flight on its session).
 */

export type StateName = 'idle' | 'model' | 'tool' | 'approval' | 'input';

export interface StateContext {
  client: DurableAgentClient;
  conversationId: string;
  /** Where the state's MCP server counts its calls. */
  counterFile: string;
}

/** What the state left on the old worker that the new worker must carry on. */
export interface Reached {
  /** The question the old worker's tool call asked (input). */
  requestId?: string;
}

export interface UpgradeState {
  name: StateName;
  /** The results table's first column. */
  fault: string;
  /** The tool call the model asks for in the first turn, on the state's own server. */
  toolCall: ScriptToolCall;
  /** The first turn's expected answer, which the model gives once the tool's result is in. */
  answer: string;
  /** How the model gives `answer`, when not at once (held back, or made of the tool's result). */
  answerStep?: StepFunction;
  settings?: ConversationSettings;
  /** Tool runs over the whole run (both workers), with why when a run is repeated by design. */
  calls: Record<string, number>;
  /** Reached after the others, right before the old worker stops, because its call must still be in flight then. */
  reachLast?: boolean;
  /** The first message. */
  message: string;
  /** Waits, on the old worker, until the conversation is in the state (its first message sent). */
  reached(context: StateContext): Promise<Reached | void>;
  /**
   * On the new worker, what lets the first turn finish: what a person or the model does (returning a sentence saying
   * so), or a sentence saying what the worker does by itself.
   */
  letGo: string | ((context: StateContext, reached: Reached) => Promise<string>);
}

/** How long the slow tool sleeps, on each of its two runs: long enough to be in flight when the deploy stops it. */
export const SLOW_MS = 5_000;
const WAIT = { timeoutMs: 90_000, intervalMs: 200 };

/** A model answer held back until the test lets it go, so a model call is in flight across the upgrade. */
export class HeldAnswer {
  readonly arrived: Promise<void>;
  private markArrived!: () => void;
  private readonly released: Promise<void>;
  private markReleased!: () => void;

  constructor() {
    this.arrived = new Promise((resolve) => (this.markArrived = resolve));
    this.released = new Promise((resolve) => (this.markReleased = resolve));
  }

  step(content: string): StepFunction {
    return async () => {
      this.markArrived();
      await this.released;
      return { content };
    };
  }

  release(): void {
    this.markReleased();
  }
}

/**
 * Polls the status query until `done`. A failing query is polled again, not fatal: a history that does not replay
 * fails every query, and the run waits on, so that the workflow tasks it fails meanwhile are counted; the timeout then
 * names the query's last error.
 */
export async function statusWhen(
  context: StateContext,
  done: (status: ConversationStatus) => boolean,
  what: string,
): Promise<ConversationStatus> {
  let lastError: unknown;
  try {
    return await until(
      async () => {
        try {
          const status = await context.client.status(context.conversationId);
          return done(status) ? status : undefined;
        } catch (error) {
          lastError = error;
          return undefined;
        }
      },
      `${context.conversationId}: ${what}`,
      WAIT,
    );
  } catch (error) {
    if (lastError === undefined) throw error;
    throw new Error(`${errorMessage(error)}; the last status query failed: ${errorMessage(lastError)}`, {
      cause: error,
    });
  }
}

/** Sends the first message and waits, on the old worker, until the conversation is in the state. */
export async function reachState(state: UpgradeState, context: StateContext): Promise<Reached> {
  await context.client.send(context.conversationId, state.message, { settings: state.settings });
  return (await state.reached(context)) ?? {};
}

/** The next message's answer. */
export const nextAnswer = (state: UpgradeState) => `Second answer (${state.name}).`;

/** The model's steps in the state's conversation: the tool call, the first turn's answer, the next message's answer. */
export function scriptOf(state: UpgradeState): (ScriptStep | StepFunction)[] {
  return [
    { toolCalls: [state.toolCall] },
    state.answerStep ?? { content: state.answer },
    { content: nextAnswer(state) },
  ];
}

/** The five states; the model state's answer is held by `held` until the test lets it go. */
export function upgradeStates(held: HeldAnswer): UpgradeState[] {
  return [
    {
      name: 'idle',
      fault: 'idle after one turn (which ran a tool call: increment)',
      toolCall: { name: 'idle__increment', arguments: { key: 'idle' } },
      answer: 'Counted: idle = 1.',
      calls: { increment: 1 },
      message: 'Count this.',
      async reached(context) {
        await statusWhen(context, (status) => status.phase === 'idle' && status.turns === 1, 'the first turn');
      },
      letGo: 'nothing was in flight',
    },
    {
      name: 'model',
      fault: 'mid-model-call (round 2 held back by the model, after an echo call)',
      toolCall: { name: 'model__echo', arguments: { text: 'before the deploy' } },
      answer: 'Held answer.',
      answerStep: held.step('Held answer.'),
      calls: { echo: 1 },
      message: 'Echo, then think.',
      reached: () => held.arrived,
      async letGo() {
        held.release();
        return 'the model let its held answer go';
      },
    },
    {
      name: 'tool',
      fault: `mid-tool-call (slow, ${SLOW_MS / 1000} s, read-only)`,
      toolCall: { name: 'tool__slow', arguments: { delayMs: SLOW_MS } },
      answer: 'Slept.',
      // The deploy cancels the call in flight; slow is read-only, so the new worker runs it again (docs/mcp.md).
      calls: { slow: 2 },
      reachLast: true,
      message: 'Take your time.',
      async reached(context) {
        await until(() => (callsPerTool(context.counterFile).slow ?? 0) >= 1, 'the slow call', WAIT);
      },
      letGo: 'the new worker ran the cancelled call again',
    },
    {
      name: 'approval',
      fault: 'awaiting approval (increment, settings.approval.require)',
      toolCall: { name: 'approval__increment', arguments: { key: 'approval' } },
      answer: 'Approved and counted.',
      // A per-conversation policy (docs/approvals.md): the mcpServers file stays one that every release's worker reads.
      settings: { approval: { require: ['approval__increment'] } },
      calls: { increment: 1 },
      message: 'Count this, once approved.',
      async reached(context) {
        await statusWhen(context, (status) => status.phase === 'awaiting_approval', 'the call to await approval');
      },
      async letGo(context) {
        const status = await statusWhen(
          context,
          (current) => (current.pendingApprovals?.length ?? 0) > 0,
          'the pending call, shown by the new worker',
        );
        const pending = status.pendingApprovals![0]!;
        await context.client.approve(context.conversationId, pending.callId, { by: 'ops@example.com' });
        return `ops@example.com approved ${pending.tool}`;
      },
    },
    {
      name: 'input',
      fault: "awaiting an elicitation answer (ask_user's question)",
      toolCall: { name: 'input__ask_user', arguments: { message: 'Who are you?' } },
      answer: 'the tool said: accept {"name":"Ada"}',
      answerStep: (request) => {
        const last = request.messages.at(-1);
        return { content: `the tool said: ${typeof last?.content === 'string' ? last.content : ''}` };
      },
      // The deploy drops the server's request; ask_user is read-only, so the new worker calls it again and the server
      // asks again, under a new request id (docs/mcp.md).
      calls: { ask_user: 2 },
      message: 'Ask me who I am.',
      async reached(context) {
        const status = await statusWhen(context, (current) => (current.pendingInputs?.length ?? 0) > 0, 'the question');
        return { requestId: status.pendingInputs![0]!.requestId };
      },
      async letGo(context, reached) {
        const status = await statusWhen(
          context,
          (current) => current.pendingInputs?.some((input) => input.requestId !== reached.requestId) ?? false,
          'the question asked again by the new worker',
        );
        const asked = status.pendingInputs!.find((input) => input.requestId !== reached.requestId)!;
        await context.client.answerInput(context.conversationId, asked.requestId, {
          action: 'accept',
          content: { name: 'Ada' },
        });
        return `the server asked again (${asked.requestId}, was ${reached.requestId}); answered accept {name: Ada}`;
      },
    },
  ];
}
