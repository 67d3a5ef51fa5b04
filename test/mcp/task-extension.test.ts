import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { McpPool } from '../../src/worker/mcp/pool.js';
import { McpProtocolError } from '../../src/worker/mcp/errors.js';
import { readTaskAnswer, TASK_ANSWER_META_KEY } from '../../src/worker/mcp/task-answer.js';
import { TaskRefusedError } from '../../src/worker/mcp/tasks.js';
import { startTaskMcpServer, type RunningTaskServer } from '../../src/testing/mcp-task-server.js';
import { httpServer } from './helpers.js';

/**
 * The worker's side of the 2026-07-28 tasks extension (src/worker/mcp/task-extension.ts), through the pool against our
 * task test server over HTTP (probed: 2026-07-28). The workflow's use of it: test/workflows/tool-task-extension.test.ts.
 */

let server: RunningTaskServer;
let pool: McpPool;
const target = (tool: string) => ({ server: 'tasks', originalName: tool });
const never = new AbortController().signal;
const resultOptions = { signal: never, onElicitation: undefined, afterAnswerMs: 0, quietMs: 0 };

beforeAll(async () => {
  server = await startTaskMcpServer({ extension: true });
  pool = new McpPool([httpServer('tasks', server.url)]);
});

afterAll(async () => {
  await pool?.close();
  await server?.close();
});

describe('the tasks extension on a 2026-07-28 connection', () => {
  it('a caller that takes tasks declares the extension, and the task answer comes back as { task }', async () => {
    const answer = await pool.callTool(target('long_job'), { polls: 2 }, { acceptTasks: true });
    expect(pool.status()[0]).toMatchObject({ protocolVersion: '2026-07-28' });
    expect(answer).toEqual({
      task: {
        taskId: expect.stringMatching(/long_job$/),
        status: 'working',
        statusMessage: '0 of 2 polls',
        pollIntervalMs: 30_000,
        ttlMs: 86_400_000,
      },
    });
    const { task } = answer as { task: { taskId: string } };
    expect(await pool.tasks.get(target('long_job'), task)).toMatchObject({ status: 'working' });
    expect(await pool.tasks.get(target('long_job'), task)).toMatchObject({ status: 'completed' });
    expect(await pool.tasks.result(target('long_job'), task, resultOptions)).toEqual({
      kind: 'result',
      result: { content: [{ type: 'text', text: 'finished long_job after 2 polls' }], isError: false },
    });
  });

  it('a caller that does not declare it gets the server’s -32021 refusal, as the extension says', async () => {
    const refused = await pool.callTool(target('long_job'), {}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpProtocolError);
    expect(String(refused)).toContain('-32021: Missing required client capability');
    expect(server.counters.calls.at(-1)).toEqual({ tool: 'long_job', task: false, revision: '2026-07-28' });
  });

  it('a task answer to a call that did not declare the extension is a protocol error, not a result', async () => {
    const refused = await pool.callTool(target('unasked_task'), {}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpProtocolError);
    expect(String(refused)).toContain('answered with a task (resultType "task"), which this call did not declare');
  });

  it('a task answer that is not a task (no taskId) is a protocol error naming what is wrong', async () => {
    const refused = await pool.callTool(target('broken_task'), {}, { acceptTasks: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpProtocolError);
    expect(String(refused)).toContain('"broken_task" answered with a task that is not one');
  });

  it('a question comes with tasks/get, goes to the asker of its key, and the answer goes back by tasks/update', async () => {
    const { task } = (await pool.callTool(target('ask_job'), {}, { acceptTasks: true })) as {
      task: { taskId: string };
    };
    const asked: string[] = [];
    const answered = await pool.tasks.result(target('ask_job'), task, {
      ...resultOptions,
      askFor: (key) => async (question) => {
        asked.push(`${key}: ${question.message}`);
        return { action: 'accept', content: { colour: 'ochre' } };
      },
    });
    expect(answered).toEqual({ kind: 'answered' });
    expect(asked).toEqual(['colour: Which colour should the job paint?']);
    expect(server.counters.updates.at(-1)).toEqual({
      taskId: task.taskId,
      inputResponses: { colour: { action: 'accept', content: { colour: 'ochre' } } },
    });
    expect(await pool.tasks.result(target('ask_job'), task, resultOptions)).toMatchObject({
      kind: 'result',
      result: { content: [{ type: 'text', text: 'painted ochre' }] },
    });
  });

  it('for the workflow: a look brings the questions, the result fetch does not ask, tasks/update sends the answers', async () => {
    const { task } = (await pool.callTool(target('ask_job'), {}, { acceptTasks: true })) as {
      task: { taskId: string };
    };
    const look = await pool.tasks.look(target('ask_job'), task);
    expect(look).toMatchObject({ task: { taskId: task.taskId, status: 'input_required' } });
    expect(look.questions).toEqual([
      {
        key: 'colour',
        mode: 'form',
        message: 'Which colour should the job paint?',
        requestedSchema: expect.objectContaining({ required: ['colour'] }),
      },
    ]);
    const updates = server.counters.updates.length;
    const asked: string[] = [];
    const fetched = await pool.tasks.result(target('ask_job'), task, {
      ...resultOptions,
      questionsToWorkflow: true,
      askFor: (key) => async () => {
        asked.push(key);
        return { action: 'cancel' };
      },
    });
    expect(fetched).toEqual({ kind: 'answered' });
    expect(asked).toEqual([]);
    expect(server.counters.updates.length).toBe(updates);
    const answers = { colour: { action: 'accept' as const, content: { colour: 'umber' } } };
    await pool.tasks.answer(target('ask_job'), task, answers);
    // Sent twice (a retried activity): the same keys, which the server has had its answer for; nothing changes.
    await pool.tasks.answer(target('ask_job'), task, answers);
    expect(server.counters.updates.slice(updates)).toEqual([
      { taskId: task.taskId, inputResponses: answers },
      { taskId: task.taskId, inputResponses: answers },
    ]);
    expect(await pool.tasks.look(target('ask_job'), task)).toEqual({
      task: expect.objectContaining({ taskId: task.taskId, status: 'completed' }),
    });
    expect(await pool.tasks.result(target('ask_job'), task, resultOptions)).toMatchObject({
      result: { content: [{ type: 'text', text: 'painted umber' }] },
    });
  });

  it('tasks/cancel reaches the server; an unknown task id is refused (TaskRefusedError)', async () => {
    const { task } = (await pool.callTool(target('never_done'), {}, { acceptTasks: true })) as {
      task: { taskId: string };
    };
    await pool.tasks.cancel(target('never_done'), task);
    expect(server.counters.cancelled.at(-1)).toBe(task.taskId);
    expect(await pool.tasks.get(target('never_done'), task)).toMatchObject({ status: 'cancelled' });
    const unknown = await pool.tasks.get(target('never_done'), { taskId: 'no-such-task' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(TaskRefusedError);
    expect(String(unknown)).toContain('Task not found');
  });
});

describe('readTaskAnswer', () => {
  it('turns a task answer into a result carrying the task, and strips the key from any other result', () => {
    const task: JSONRPCMessage = {
      jsonrpc: '2.0',
      id: 1,
      result: { resultType: 'task', taskId: 't1', status: 'working', _meta: { trace: 'x' } },
    };
    readTaskAnswer(task);
    expect(task).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'complete',
        content: [],
        isError: true,
        _meta: { trace: 'x', [TASK_ANSWER_META_KEY]: { taskId: 't1', status: 'working' } },
      },
    });
    const spoofed: JSONRPCMessage = {
      jsonrpc: '2.0',
      id: 2,
      result: { content: [], _meta: { [TASK_ANSWER_META_KEY]: { taskId: 'fake', status: 'working' } } },
    };
    readTaskAnswer(spoofed);
    expect(spoofed).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [], _meta: {} } });
  });
});
