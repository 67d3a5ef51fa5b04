import type { ElicitationHandler } from '../../mcp/elicitation.js';
import { untilAborted } from '../../mcp/abort-signals.js';
import type { InputPoll, InputPollResult } from '../../../workflows/input-requests.js';
import type { StreamTarget } from '../model/text-publisher.js';

/**
 * The tool activity's side of MCP elicitation: a server's question goes to the conversation's own run (the internal
 * `requestInput` update), which shows it to the person; the activity long-polls the same update until the answer
 * comes, heartbeating meanwhile (the call's periodic heartbeat goes on), and hands the answer to the server.
 */

/**
 * Sends one poll to the run (by default the `requestInput` update). `signal` aborts when the call is cancelled: the
 * poll's request must stop then too, since a worker that shuts down closes its client while a poll may still wait.
 */
export type InputPoller = (target: StreamTarget, poll: InputPoll, signal: AbortSignal) => Promise<InputPollResult>;

/** How long one poll waits in the workflow before it answers with no answer yet. */
export const INPUT_POLL_WAIT_MS = 30_000;

export interface CallIdentity {
  target: StreamTarget;
  callId: string;
  tool: { name: string; server: string };
  attempt: number;
  /** Aborts when the activity is cancelled. */
  cancelled: AbortSignal;
}

/** The `onElicitation` of one tool call: request ids are `<callId>:<attempt>:<n>`, unique per question. */
export function askTheConversation(poller: InputPoller, call: CallIdentity, pollWaitMs = INPUT_POLL_WAIT_MS) {
  let asked = 0;
  const handler: ElicitationHandler = async (request, { waitMs, signal }) => {
    const poll: InputPoll = {
      request: {
        requestId: `${call.callId}:${call.attempt}:${++asked}`,
        callId: call.callId,
        tool: call.tool.name,
        server: call.tool.server,
        ...request,
      },
      attempt: call.attempt,
      timeoutMs: waitMs,
      waitMs: pollWaitMs,
    };
    const aborted = AbortSignal.any([signal, call.cancelled]);
    for (;;) {
      aborted.throwIfAborted();
      const { answer } = await untilAborted(poller(call.target, poll, aborted), aborted);
      if (answer !== undefined) {
        return answer.content === undefined
          ? { action: answer.action }
          : { action: answer.action, content: answer.content };
      }
    }
  };
  return handler;
}
