// Tool calls answered with an MCP task (docs/mcp.md, "Tasks"), on the task test server (configured as `tasks`,
// 2025-11-25 over Streamable HTTP, a poll a second): the task id recorded by the call's activity, polls on durable
// timers, the result fetched; and an interrupt while the task works, which cancels it. And a 2026-07-28 task (the tasks
// extension, on the same server speaking both revisions) whose question waits in the workflow. Whole runs (state
// `finished`).
import { finishAndRecord, idleAfter, pendingInput, startQueued, statusWhen, until } from './drive.mjs';

const longJob = { name: 'tasks__long_job', arguments: { polls: 2, text: 'the report' } };

export const taskScenarios = {
  'mcp-task': {
    description: 'a tool that requires a task: the task id is recorded, polled twice on timers, and its result fetched',
    agent: 'tasks',
    script: [{ toolCalls: [longJob] }, { content: 'The report is done.' }],
    async run(context) {
      await finishAndRecord(context, await startQueued(context, ['Write the report.']));
    },
  },
  'mcp-task-interrupted': {
    description: '`interrupt` while the task works: tasks/cancel is sent and the model reads that it was cancelled',
    agent: 'tasks',
    script: [{ toolCalls: [{ name: 'tasks__never_done', arguments: {} }] }, { content: 'Stopped.' }],
    async run(context) {
      const handle = await context.start({});
      await context.client.send(context.id, 'Start the endless job.', { messageId: 'm-1' });
      await until('the task wait', async () => {
        const activity = (await context.client.status(context.id)).currentTurn?.activity ?? '';
        return activity.startsWith('waiting for task') ? activity : undefined;
      });
      await context.client.interrupt(context.id, { reason: 'enough' });
      await statusWhen(handle, 'the interrupted turn', idleAfter(1));
      await context.client.end(context.id);
      await finishAndRecord(context, handle);
    },
  },
  'mcp-task-question': {
    description:
      'a 2026-07-28 task asks a question: a poll brings it, the turn asks it with no activity open (patch ' +
      '`task-questions-in-workflow`), `answerInput` accepts, `answerToolTask` sends it with tasks/update, the task ends',
    agent: 'task-extension',
    script: [{ toolCalls: [{ name: 'tasks__ask_job', arguments: {} }] }, { content: 'Painted.' }],
    async run(context) {
      const handle = await context.start({});
      await context.client.send(context.id, 'Paint it.', { messageId: 'm-1' });
      const request = await pendingInput(handle);
      await context.client.answerInput(context.id, request.requestId, {
        action: 'accept',
        content: { colour: 'teal' },
      });
      await statusWhen(handle, 'the answered turn', idleAfter(1));
      await context.client.end(context.id);
      await finishAndRecord(context, handle);
    },
  },
};
