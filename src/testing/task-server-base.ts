import { Server } from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * What the task test servers of both revisions share (./mcp-task-server.ts, ./mcp-task-extension-server.ts). The SDK
 * v2 server has the task vocabulary as wire types only, and checks a `tools/call` handler's answer as a call result: a
 * task is not one (a `CreateTaskResult` of 2025-11-25, `resultType: "task"` of 2026-07-28), so these servers leave
 * that one check out; each revision's codec passes the rest.
 */
export class TaskCallServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: Parameters<Server['_wrapHandler']>[1],
  ): ReturnType<Server['_wrapHandler']> {
    return method === 'tools/call' ? handler : super._wrapHandler(method, handler);
  }
}

/** The params of `tasks/get`, `tasks/result`, `tasks/update` and `tasks/cancel`: the task's id, and what else comes. */
export const TaskIdParams = z.object({ taskId: z.string() }).passthrough();
