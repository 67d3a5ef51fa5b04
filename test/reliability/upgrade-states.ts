import type { DurableAgentClient } from '../../src/client/index.js';
import { errorMessage } from '../../src/shared/errors.js';
import type { ScriptStep, StepFunction } from '../../src/testing/scripted-model/index.js';
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
  /** The model's answers, in order: the first turn's steps, then the answer to the next message. */
  steps: (ScriptStep | StepFunction)[];
  /** The first turn's expected answer. */
  answer: string;
  /** The next message's expected answer. */
  nextAnswer: string;
  settings?: ConversationSettings;
  /** Tool runs over the whole run (both workers), with why when a run is repeated by design. */
  calls: Record<string, number>;
  /** Reached after the others, right before the old worker stops, because its call must still be in flight then. */
  reachLast?: boolean;
  /** Send the first message and wait, on the old worker, until the conversation is in the state. */
  reach(context: StateContext): Promise<Reached>;
  /** On the new worker: what a person (or the model) does so that the first turn finishes; a sentence. */
  letGo(context: StateContext, reached: Reached): Promise<string>;
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

const nextAnswer = (name: StateName) => `Second answer (${name}).`;

/** The five states; the model state's answer is held by `held` until the test lets it go. */
export function upgradeStates(held: HeldAnswer): UpgradeState[] {
  return [
    {
      name: 'idle',
      fault: 'idle after one turn (which ran a tool call: increment)',
      steps: [
        { toolCalls: [{ name: 'idle__increment', arguments: { key: 'idle' } }] },
        { content: 'Counted: idle = 1.' },
        { content: nextAnswer('idle') },
      ],
      answer: 'Counted: idle = 1.',
      nextAnswer: nextAnswer('idle'),
      calls: { increment: 1 },
      async reach(context) {
        await context.client.send(context.conversationId, 'Count this.');
        await statusWhen(context, (status) => status.phase === 'idle' && status.turns === 1, 'the first turn');
        return {};
      },
      async letGo() {
        return 'nothing was in flight';
      },
    },
    {
      name: 'model',
      fault: 'mid-model-call (round 2 held back by the model, after an echo call)',
      steps: [
        { toolCalls: [{ name: 'model__echo', arguments: { text: 'before the deploy' } }] },
        held.step('Held answer.'),
        { content: nextAnswer('model') },
      ],
      answer: 'Held answer.',
      nextAnswer: nextAnswer('model'),
      calls: { echo: 1 },
      async reach(context) {
        await context.client.send(context.conversationId, 'Echo, then think.');
        await held.arrived;
        return {};
      },
      async letGo() {
        held.release();
        return 'the model let its held answer go';
      },
    },
    {
      name: 'tool',
      fault: `mid-tool-call (slow, ${SLOW_MS / 1000} s, read-only)`,
      steps: [
        { toolCalls: [{ name: 'tool__slow', arguments: { delayMs: SLOW_MS } }] },
        { content: 'Slept.' },
        { content: nextAnswer('tool') },
      ],
      answer: 'Slept.',
      nextAnswer: nextAnswer('tool'),
      // The deploy cancels the call in flight; slow is read-only, so the new worker runs it again (docs/mcp.md).
      calls: { slow: 2 },
      reachLast: true,
      async reach(context) {
        await context.client.send(context.conversationId, 'Take your time.');
        await until(() => (callsPerTool(context.counterFile).slow ?? 0) >= 1, 'the slow call', WAIT);
        return {};
      },
      async letGo() {
        return 'the new worker ran the cancelled call again';
      },
    },
    {
      name: 'approval',
      fault: 'awaiting approval (increment, settings.approval.require)',
      steps: [
        { toolCalls: [{ name: 'approval__increment', arguments: { key: 'approval' } }] },
        { content: 'Approved and counted.' },
        { content: nextAnswer('approval') },
      ],
      answer: 'Approved and counted.',
      nextAnswer: nextAnswer('approval'),
      // A per-conversation policy (docs/approvals.md): the mcpServers file stays one that every release's worker reads.
      settings: { approval: { require: ['approval__increment'] } },
      calls: { increment: 1 },
      async reach(context) {
        await context.client.send(context.conversationId, 'Count this, once approved.', { settings: this.settings });
        await statusWhen(context, (status) => status.phase === 'awaiting_approval', 'the call to await approval');
        return {};
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
      steps: [
        { toolCalls: [{ name: 'input__ask_user', arguments: { message: 'Who are you?' } }] },
        (request) => {
          const last = request.messages.at(-1);
          return { content: `the tool said: ${typeof last?.content === 'string' ? last.content : ''}` };
        },
        { content: nextAnswer('input') },
      ],
      answer: 'the tool said: accept {"name":"Ada"}',
      nextAnswer: nextAnswer('input'),
      // The deploy drops the server's request; ask_user is read-only, so the new worker calls it again and the server
      // asks again, under a new request id (docs/mcp.md).
      calls: { ask_user: 2 },
      async reach(context) {
        await context.client.send(context.conversationId, 'Ask me who I am.');
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
