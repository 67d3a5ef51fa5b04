import { isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/client';

/**
 * A 2026-07-28 server's task answer to a tool call (`resultType: "task"`, the `io.modelcontextprotocol/tasks`
 * extension, ./task-extension.ts), made readable to the SDK v2 client, whose 2026-07-28 decoder refuses any
 * `resultType` but `complete` and `input_required`: the answer becomes a call result that carries the task under
 * {@link TASK_ANSWER_META_KEY}, with `isError` so that no output schema applies, and the call returns it as `{ task }`.
 *
 * Called by the transport's first handler (./server-connection.ts), as ./result-type.ts is: the SDK's `Client.connect`
 * keeps a handler already set on the transport and calls it first with the same message.
 */

/** Where a rewritten task answer keeps the task; never sent, and removed from any result a server sends with it. */
export const TASK_ANSWER_META_KEY = 'durable-agent/task-answer';

export function readTaskAnswer(message: JSONRPCMessage): void {
  if (!isJSONRPCResultResponse(message)) return;
  const result = message.result as Record<string, unknown>;
  const meta = result._meta as Record<string, unknown> | undefined;
  if (result.resultType !== 'task') {
    // Only this rewrite sets the key: a server cannot pass a result off as a task by sending it.
    if (meta !== undefined && TASK_ANSWER_META_KEY in meta) delete meta[TASK_ANSWER_META_KEY];
    return;
  }
  const { resultType: _task, _meta: _own, ...task } = result;
  message.result = {
    resultType: 'complete',
    content: [],
    isError: true,
    _meta: { ...meta, [TASK_ANSWER_META_KEY]: task },
  };
}
