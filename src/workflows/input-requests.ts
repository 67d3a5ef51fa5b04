import type { ApplicationFailure } from '@temporalio/workflow';
import { expectedFailure, FailureType } from '../shared/errors.js';
import type { InputAnswer, InputRequest } from '../shared/input-messages.js';
import { inputContentProblems, withSchemaDefaults } from '../shared/input-schema.js';
import type { EventLog } from './stream-events.js';
import { waitEnded, waitStarted } from './wait-metrics.js';

/**
 * Questions MCP servers ask the person during tool calls (elicitation), as the conversation holds them. A 2025-11-25
 * server asks while its call runs: the tool activity registers the question and long-polls for its answer with the
 * internal `requestInput` update, until the server's wait bound. A 2026-07-28 server answers the call `input_required`:
 * the turn registers its questions with `ask` and waits for their answers with no activity open (./tool-questions.ts).
 * Either way a person answers with `answerInput`; an interrupt or the end of the tool call answer `cancel`. A question
 * lives inside a tool call, inside a turn, and a run continues as new only between turns, so none is ever pending
 * when a run hands over: nothing needs carrying. Plain (the workflow passes `condition`), so unit tests run it
 * without Temporal. Every `Date.now()` here is workflow time.
 */

/** The argument of the internal `requestInput` update. */
export interface InputPoll {
  /** The question; the poll that first names `requestId` registers it. */
  request: Omit<InputRequest, 'turn' | 'requestedAt' | 'expiresAt'>;
  /** The tool activity's attempt: a question of a later attempt of the same call replaces those of earlier ones. */
  attempt: number;
  /** How long the question may wait for an answer, in all (ms); sets its `expiresAt`. */
  timeoutMs: number;
  /** How long this poll waits for the answer (ms); it answers with none after that, and the activity polls again. */
  waitMs: number;
}

/** The result of the internal `requestInput` update: the answer, once there is one. */
export interface InputPollResult {
  answer?: InputAnswer;
}

/** `wait(ready, ms)` resolves once `ready` holds or after `ms` (Temporal's `condition`). */
export type Wait = (ready: () => boolean, timeoutMs: number) => Promise<unknown>;

interface Pending extends InputRequest {
  /** The tool activity's attempt that asked; 0 for a question the turn asked (a 2026-07-28 server's). */
  attempt: number;
}

/** A question the turn asks for a 2026-07-28 server: it waits until answered, with no expiry of its own. */
export type TurnQuestion = Omit<InputRequest, 'turn' | 'requestedAt' | 'expiresAt'>;

export class InputRequests {
  private readonly pending = new Map<string, Pending>();
  /** Answers of this run's questions, so a repeated or late poll gets the same answer and registers nothing. */
  private readonly answered = new Map<string, InputAnswer>();

  constructor(
    private readonly events: EventLog,
    private readonly changed: () => void,
  ) {}

  /** The questions waiting for a person, oldest first. */
  list(): InputRequest[] {
    return [...this.pending.values()].map(({ attempt: _attempt, ...request }) => request);
  }

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /**
   * The `requestInput` update: register the question (once per request id) and wait for its answer, at most `waitMs`.
   * `turn` is the running turn; without one (a late poll of a finished call) the answer is `cancel`.
   */
  async poll(poll: InputPoll, turn: number | undefined, wait: Wait): Promise<InputPollResult> {
    const { requestId } = poll.request;
    const known = this.answered.get(requestId);
    if (known !== undefined) return { answer: known };
    if (turn === undefined) return { answer: { requestId, action: 'cancel', by: 'turn-ended' } };
    const request = this.pending.get(requestId) ?? this.register(poll.request, turn, poll.attempt, poll.timeoutMs);
    const expiresAt = request.expiresAt === undefined ? Infinity : Date.parse(request.expiresAt);
    const left = expiresAt - Date.now();
    if (left > 0) await wait(() => this.answered.has(requestId), Math.min(poll.waitMs, left));
    if (!this.answered.has(requestId) && expiresAt <= Date.now()) {
      this.settle({ requestId, action: 'cancel', by: 'timeout' });
    }
    const answer = this.answered.get(requestId);
    return answer === undefined ? {} : { answer };
  }

  /**
   * The turn asks a 2026-07-28 server's question: registered once (asking again, as a replayed turn does, changes
   * nothing). Its answer is read with {@link answerOf}.
   */
  ask(question: TurnQuestion, turn: number): void {
    if (this.pending.has(question.requestId) || this.answered.has(question.requestId)) return;
    this.register(question, turn, 0, undefined);
  }

  /** The answer of a question of this run, once there is one. */
  answerOf(requestId: string): InputAnswer | undefined {
    return this.answered.get(requestId);
  }

  /** The `answerInput` update's validator: a pending request and an answer that fits it; nothing changes otherwise. */
  validateAnswer(answer: InputAnswer): void {
    const request = this.pending.get(answer?.requestId);
    if (request === undefined) {
      throw this.answered.has(answer?.requestId)
        ? failure(FailureType.AlreadyAnswered, `Input request ${answer.requestId} was answered already.`)
        : failure(
            FailureType.UnknownInputRequest,
            `No input request ${JSON.stringify(answer?.requestId)} is pending; the status query's pendingInputs ` +
              'lists the pending ones (it may have been answered by its timeout or ended with its tool call).',
          );
    }
    if (!['accept', 'decline', 'cancel'].includes(answer.action)) {
      throw invalid(`action must be accept, decline or cancel, got ${JSON.stringify(answer.action)}.`);
    }
    if (answer.action !== 'accept' || request.mode === 'url') {
      if (answer.content !== undefined) {
        throw invalid(`content goes only with accept of a form request; this is ${answer.action} (${request.mode}).`);
      }
      return;
    }
    const content = answer.content ?? {};
    if (typeof content !== 'object' || content === null || Array.isArray(content)) {
      throw invalid('content must be a JSON object of the requested fields.');
    }
    const problems = inputContentProblems(
      request.requestedSchema,
      withSchemaDefaults(request.requestedSchema, content),
    );
    if (problems.length > 0) {
      throw invalid(`the content does not match the requested fields: ${problems.join('; ')}.`);
    }
  }

  /** The `answerInput` update, after its validator: the answer goes to the waiting tool call. */
  answer(answer: InputAnswer): InputAnswer {
    const request = this.pending.get(answer.requestId);
    const { requestId, action, content, by } = answer;
    const settled: InputAnswer = {
      requestId,
      action,
      ...(action === 'accept' && request?.mode === 'form'
        ? { content: withSchemaDefaults(request.requestedSchema, content ?? {}) }
        : {}),
      ...(by !== undefined ? { by } : {}),
    };
    this.settle(settled);
    return settled;
  }

  /** An interrupt: every pending question is answered `cancel`. */
  cancelAll(by: string): void {
    for (const requestId of [...this.pending.keys()]) this.settle({ requestId, action: 'cancel', by });
  }

  /** A tool call ended: its questions are done (one still pending is cancelled: nobody waits for it any more). */
  callFinished(callId: string): void {
    for (const [requestId, request] of [...this.pending]) {
      if (request.callId === callId) this.settle({ requestId, action: 'cancel', by: 'tool-call-ended' });
    }
  }

  /** `timeoutMs` undefined: the question waits until it is answered or its call ends. */
  private register(question: TurnQuestion, turn: number, attempt: number, timeoutMs: number | undefined): Pending {
    const now = Date.now();
    const request: Pending = {
      ...question,
      turn,
      requestedAt: new Date(now).toISOString(),
      ...(timeoutMs !== undefined ? { expiresAt: new Date(now + timeoutMs).toISOString() } : {}),
      attempt,
    };
    // A later attempt of the same call asks again: the earlier attempt's questions have nobody waiting for them.
    for (const [requestId, earlier] of [...this.pending]) {
      if (earlier.callId === request.callId && earlier.attempt < request.attempt) {
        this.settle({ requestId, action: 'cancel', by: 'retried' });
      }
    }
    this.pending.set(request.requestId, request);
    const { attempt: _attempt, ...shown } = request;
    this.events.append({ type: 'input_requested', ...shown });
    waitStarted('question', request.requestId, {
      'durable_agent.input.request_id': request.requestId,
      'gen_ai.tool.call.id': request.callId,
      'gen_ai.tool.name': request.tool,
      'durable_agent.turn': request.turn,
    });
    this.changed();
    return request;
  }

  private settle(answer: InputAnswer): void {
    const request = this.pending.get(answer.requestId);
    if (request === undefined) return;
    this.pending.delete(answer.requestId);
    this.answered.set(answer.requestId, answer);
    waitEnded('question', answer.requestId, request.requestedAt, answer.action);
    this.events.append({
      type: 'input_answered',
      ...answer,
      turn: request.turn,
      answeredAt: new Date(Date.now()).toISOString(),
    });
    this.changed();
  }
}

function failure(type: string, message: string): ApplicationFailure {
  return expectedFailure({ type, message, nonRetryable: true });
}

function invalid(problem: string): ApplicationFailure {
  return failure(FailureType.InvalidInput, `Invalid answer: ${problem} Nothing changed; answer again.`);
}
