// What the scenarios share: the test server's tool calls in the model's words, and waiting for a conversation to get
// somewhere (real time on a dev server: nothing here skips time).
import { setTimeout as sleep } from 'node:timers/promises';
import { askUpdate, endSignal, statusQuery } from '../../dist/workflows/definitions.js';

/** A tool call of our MCP test server (configured as `test`), as the scripted model asks for it. */
export const call = (name, args = {}) => ({ name: `test__${name}`, arguments: args });

/** Start the conversation with `contents` queued (ids m-1, m-2, ...); it closes once it has answered them. */
export function startQueued(context, contents, settings = {}) {
  const messages = contents.map((content, index) => ({ id: `m-${index + 1}`, content }));
  return context.start({ settings, messages, closeWhenIdle: true });
}

/** Wait for the conversation's last run to close, and record every run from `handle`'s first. */
export async function finishAndRecord(context, handle) {
  await handle.result(); // follows continue-as-new to the last run
  context.record(handle.firstExecutionRunId);
}

/** A conversation that answers `contents` with these settings and closes; all its runs recorded. */
export async function answerQueued(context, contents, settings = {}) {
  await finishAndRecord(context, await startQueued(context, contents, settings));
}

/** An `ask` update whose update id is the message id, as the client sends it. */
export const ask = (handle, id, content) => handle.executeUpdate(askUpdate, { args: [{ id, content }], updateId: id });

/** `end`, then wait for the run to close and record the runs. */
export async function endAndRecord(context, handle) {
  await handle.signal(endSignal, {});
  await finishAndRecord(context, handle);
}

/** Poll `probe` every 100 ms until it returns something other than undefined; fail naming `what` after 60 s. */
export async function until(what, probe) {
  for (let attempt = 0; attempt < 600; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The status query of the conversation's latest run, once `done` holds for it. */
export function statusWhen(handle, what, done) {
  return until(what, async () => {
    const status = await handle.query(statusQuery);
    return done(status) ? status : undefined;
  });
}

/** The conversation is idle after `turns` turns. */
export const idleAfter = (turns) => (status) => status.phase === 'idle' && status.turns === turns;

/** The first tool call waiting for approval, once there is one. */
export async function pendingApproval(handle) {
  const status = await statusWhen(handle, 'a pending approval', (current) => current.pendingApprovals?.length > 0);
  return status.pendingApprovals[0];
}

/** The first question of an MCP server waiting for an answer, once there is one. */
export async function pendingInput(handle) {
  const status = await statusWhen(handle, "a server's question", (current) => current.pendingInputs?.length > 0);
  return status.pendingInputs[0];
}

/** Activities of `type` scheduled in `history` that have not closed (completed, failed, timed out or cancelled). */
export function openActivities(history, type) {
  const scheduled = new Set();
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes?.activityType?.name === type) scheduled.add(String(event.eventId));
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (closed) scheduled.delete(String(closed.scheduledEventId));
  }
  return scheduled.size;
}

/** Signals named `name` in `history`. */
export const signalsIn = (history, name) =>
  (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === name).length;

/** Updates named `name` that `history` shows accepted. */
export const acceptedUpdates = (history, name) =>
  (history.events ?? []).filter(
    (event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name,
  ).length;
