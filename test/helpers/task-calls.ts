import type { JsonObject } from '../../src/shared/types.js';

/**
 * What each user message makes the model call in the task tests (test/workflows/tool-tasks.test.ts at 2025-11-25,
 * tool-task-extension.test.ts at 2026-07-28): the task test server's tools, under the server name `tasks`.
 */
export const TASK_CALLS: Record<string, { name: string; arguments: JsonObject }[]> = {
  long: [{ name: 'tasks__long_job', arguments: { polls: 30, text: 'the long job' } }],
  short: [{ name: 'tasks__long_job', arguments: { polls: 2, text: 'the short job' } }],
  never: [{ name: 'tasks__never_done', arguments: {} }],
  plain: [{ name: 'tasks__plain_answer', arguments: {} }],
  twice: [
    { name: 'tasks__same_id', arguments: {} },
    { name: 'tasks__same_id', arguments: {} },
  ],
  forgetful: [{ name: 'tasks__forgetful', arguments: {} }],
  failing: [{ name: 'tasks__failing_job', arguments: {} }],
  optional: [{ name: 'tasks__optional_job', arguments: {} }],
  expiring: [{ name: 'tasks__expiring_job', arguments: {} }],
  ask: [{ name: 'tasks__ask_job', arguments: {} }],
  deaf: [{ name: 'tasks__deaf_ask_job', arguments: {} }],
  broken: [{ name: 'tasks__broken_task', arguments: {} }],
};

/** A message's content as text. */
export const messageText = (content: unknown): string =>
  typeof content === 'string' ? content : JSON.stringify(content);
