import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import { errorMessage } from '../../shared/errors.js';
import type { JsonObject } from '../../shared/types.js';
import { withSchemaDefaults } from '../../shared/input-schema.js';

/**
 * MCP elicitation on the client side: a server asks the person a question (`elicitation/create`) while one of its tool
 * calls runs. The session hands the question to the call in flight, whose `onElicitation` (the tool activity's) asks
 * the conversation and waits for the answer. See docs/mcp.md, "Questions from servers (elicitation)".
 */

/** The capability the client declares: form mode and URL mode. */
export const ELICITATION_CAPABILITY = { form: {}, url: {} };

/** A server's question, as plain JSON. */
export interface ElicitationRequest {
  mode: 'form' | 'url';
  message: string;
  /** Form mode: the JSON Schema of the requested fields (a flat object of primitive properties). */
  requestedSchema?: JsonObject;
  /** URL mode: the page the person opens. */
  url?: string;
}

/** The person's answer, as the server gets it. */
export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: JsonObject;
}

/** Asks the person and resolves with the answer; `waitMs` is how long it may wait; `signal` aborts with the call. */
export type ElicitationHandler = (
  request: ElicitationRequest,
  options: { waitMs: number; signal: AbortSignal },
) => Promise<ElicitationAnswer>;

/** One tool call in flight on a session, as far as questions are concerned. */
export interface CallInFlight {
  /** Set for a task's `tasks/result` (./tasks.ts): the questions that name this task in `_meta` are its own. */
  taskId?: string;
  /** Answers a question of this call (the call's own wait bound and timeout pause are applied by it). */
  ask(request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationAnswer>;
}

const CANCEL: ElicitResult = { action: 'cancel' };

/**
 * Route a server's question to the one tool call in flight on its session. MCP does not say which request a
 * question belongs to, so with no call, or several calls in flight on the same session (one worker running several
 * calls of one server at once), nobody can be asked without risking the wrong conversation: the answer is `cancel`.
 */
export async function routeElicitation(
  calls: ReadonlySet<CallInFlight>,
  params: ElicitRequest['params'],
  signal: AbortSignal,
  warn: (message: string) => void,
): Promise<ElicitResult> {
  // A task's question names its task (2025-11-25 `related-task`), so it goes to that task's request whatever else runs.
  const taskId = relatedTaskId(params);
  if (taskId !== undefined) calls = new Set([...calls].filter((call) => call.taskId === taskId));
  if (calls.size !== 1) {
    warn(
      calls.size === 0
        ? 'asked a question outside any tool call; answered cancel'
        : `asked a question while ${calls.size} of its tool calls ran at once on one session, so it cannot tell ` +
            'whose: answered cancel',
    );
    return CANCEL;
  }
  const [call] = calls;
  try {
    const request = toRequest(params);
    const answer = await call!.ask(request, signal);
    if (answer.action !== 'accept') return { action: answer.action };
    // A form accepted without a field means its default, whoever answered (the workflow applies them too).
    const content =
      request.mode === 'form' ? withSchemaDefaults(request.requestedSchema, answer.content ?? {}) : answer.content;
    return content === undefined
      ? { action: 'accept' }
      : { action: 'accept', content: content as ElicitResult['content'] };
  } catch (error) {
    warn(`could not ask the person its question (${errorMessage(error)}); answered cancel`);
    return CANCEL;
  }
}

function relatedTaskId(params: ElicitRequest['params']): string | undefined {
  const related = params._meta?.[RELATED_TASK];
  const taskId = related !== null && typeof related === 'object' ? (related as { taskId?: unknown }).taskId : undefined;
  return typeof taskId === 'string' ? taskId : undefined;
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** A question as plain JSON: the same shape whether it came as `elicitation/create` or inside `input_required`. */
export function toRequest(params: ElicitRequest['params']): ElicitationRequest {
  if (params.mode === 'url') return { mode: 'url', message: params.message, url: params.url };
  return {
    mode: 'form',
    message: params.message,
    // Round-trip through JSON so only plain data goes on to workflow history.
    requestedSchema: JSON.parse(JSON.stringify(params.requestedSchema)) as JsonObject,
  };
}

/**
 * A call's timeout that does not run while the person is asked: `pause()` when a question is asked, `resume()` when it
 * is answered. When it expires, `signal` aborts with `reason` (the SDK then cancels the request).
 */
export class PausableDeadline {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private left: number;
  private startedAt = 0;
  private paused = 0;
  private cleared = false;

  constructor(
    timeoutMs: number,
    private readonly reason: () => Error,
  ) {
    this.left = timeoutMs;
    this.start();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  pause(): void {
    if (this.paused++ > 0 || this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= Date.now() - this.startedAt;
  }

  resume(): void {
    if (--this.paused > 0 || this.controller.signal.aborted || this.cleared) return;
    this.start();
  }

  /**
   * The call is over: the timer stops for good. A question still being asked resumes the deadline as it gives up
   * (a cancelled call gives up after the call), and a timer started then would keep a stopping worker alive.
   */
  clear(): void {
    this.cleared = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    this.startedAt = Date.now();
    this.timer = setTimeout(() => this.controller.abort(this.reason()), Math.max(0, this.left));
  }
}
