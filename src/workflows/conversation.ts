import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  makeContinueAsNewFunc,
  patched,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { ConversationCore } from './conversation-core.js';
import {
  approveUpdate,
  askUpdate,
  type ConversationInput,
  type ApproveRequest,
  type ConversationOutcome,
  type DenyRequest,
  denyUpdate,
  endSignal,
  handlerDescriptions as described,
  type IncomingMessage,
  interruptSignal,
  modelContextQuery,
  statusQuery,
  transcriptQuery,
  userMessageSignal,
} from './definitions.js';
import { continuedInput, lookBack, type EarlierRun } from './earlier-runs.js';
import { handleEventStream } from './event-polls.js';
import { handleInputRequests } from './input-handlers.js';
import { runTurn } from './turn.js';
import { refuseUndecodableInput, refusingUndecodable } from './undecodable-guard.js';
import { shouldMove } from './version-routing.js';
import { Visibility } from './visibility.js';

export { DEFAULT_MAX_TURNS_PER_RUN } from './conversation-core.js';

/** The patch under which a conversation continues as new, between turns, onto a newly current worker version. */
export const UPGRADE_BETWEEN_TURNS = 'upgrade-between-turns';

// Local: a visibility list and a describe or two, before the run answers anything; no task queue round trip. Retried
// for a minute; if it still fails, the run goes on as if it found nothing (and says so in the log).
const { findEarlierRun } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds' },
});

// Local, short: if the deployment cannot be read, the run stays on its version and looks again after the next turn.
const { readDeploymentRouting } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '5 seconds',
  scheduleToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds' },
});

/**
 * One conversation: a queue of user messages answered one turn at a time, driven by signals and updates,
 * continued as new between turns so it can live for months. The state and its rules are in ConversationCore; this
 * function wires it to Temporal and runs the turns.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  refuseUndecodableInput(input);
  const { conversationId } = input;
  const info = workflowInfo();
  const visibility = new Visibility();
  const conversation: ConversationCore = new ConversationCore(input, {
    continueAsNewSuggested: () => workflowInfo().continueAsNewSuggested,
    changed: () => visibility.describe(conversation.status()),
    warn: (message, attributes) => log.warn(message, attributes),
    // The phase goes between `running` and `awaiting_approval`: the search attribute too, so lists find it.
    approvalsChanged: () => publish(),
    // Waiting for a person shows in the search attribute too (`awaiting_input`), not only in the current details.
    inputsChanged: () => publish(),
  });
  const { settings } = conversation;
  // A run started from an ended conversation's state only keeps it readable: it shows in no list of its own.
  const listed = input.state?.ended !== true;
  const publish = () =>
    listed ? visibility.publish(conversation.status()) : visibility.describe(conversation.status());

  // Every handler refuses what the worker could not decrypt (a client with the wrong key) instead of failing the task.
  const setHandler = refusingUndecodable();
  // Keep this order: signals and updates that arrived before their handler are delivered as it is set, so the order
  // of these calls is part of what replay must reproduce.
  setHandler(userMessageSignal, (message) => conversation.receive(message), { description: described.userMessage });
  setHandler(askUpdate, (message) => conversation.ask(message, (settled) => condition(settled)), {
    validator: (message: IncomingMessage) => conversation.validateAsk(message),
    description: described.ask,
  });
  setHandler(interruptSignal, (request) => conversation.interrupt(request?.reason), {
    description: described.interrupt,
  });
  const polls = handleEventStream(conversation.events, conversationId, setHandler);
  setHandler(endSignal, () => conversation.end(), { description: described.end });
  setHandler(statusQuery, () => conversation.status(), { description: described.status });
  setHandler(transcriptQuery, (request) => conversation.transcriptPage(request), { description: described.transcript });
  setHandler(modelContextQuery, (request) => conversation.modelContext(request), {
    description: described.modelContext,
  });
  const { approvals } = conversation;
  setHandler(approveUpdate, (request) => approvals.approve(request), {
    validator: (request: ApproveRequest) => approvals.validateApprove(request),
    description: described.approve,
  });
  setHandler(denyUpdate, (request) => approvals.deny(request), {
    validator: (request: DenyRequest) => approvals.validateDeny(request),
    description: described.deny,
  });
  handleInputRequests(conversation, setHandler);

  // A run that did not continue from another may have been started over closed runs of the same id, by a client that
  // did not carry their state (earlier-runs.ts): it looks back before it answers anything, and continues from them.
  if (info.continuedFromExecutionRunId === undefined) {
    const earlier = await lookForEarlierRun();
    const found = lookBack(input, earlier);
    if (found.kind !== 'go-on') {
      log.warn('this run was started over closed runs of its conversation without their state; continuing from them', {
        conversationId,
        earlierRunId: found.runId,
        ended: found.kind === 'ended',
      });
      if (found.kind === 'ended') conversation.end();
      conversation.handOver();
      await handlersFinished();
      return continueAsNew<typeof conversationWorkflow>(continuedInput(input, earlier, conversation.state()));
    }
  }

  // A run that starts with a message starts its turn in this same workflow task, which publishes `running`.
  if (conversation.queued === 0) publish();
  else visibility.describe(conversation.status());

  for (;;) {
    if (input.closeWhenIdle && conversation.queued === 0 && !conversation.ended) {
      await handlersFinished();
      if (conversation.queued === 0) return close('completed');
    }
    const ready = () => conversation.hasWork;
    // `condition(fn, undefined)` waits with no timer but resolves to `undefined`, which would read as "idle": pass a
    // timeout only when one is configured.
    const woke =
      settings.idleTimeoutMs === undefined
        ? (await condition(ready), true)
        : await condition(ready, settings.idleTimeoutMs);
    if (!woke) {
      log.info('closing the idle conversation; the next message reopens it', { conversationId });
      await handlersFinished();
      return close('idle');
    }
    if (conversation.ended) break;
    // Between turns a run pinned to a Worker Deployment Version that is no longer the target moves to the target: it
    // continues as new there. Without versioning the flag is never set, and nothing here runs.
    if (targetMayHaveChanged() && (await targetChanged())) return await moveToTarget();
    const message = conversation.nextMessage();
    if (message === undefined) {
      conversation.handOver();
      await handlersFinished();
      return continueAsNew<typeof conversationWorkflow>(nextRunInput());
    }
    // Inline, not in a function of its own: an extra await here could reorder commands against the recorded histories
    // when one activation resolves several things at once.
    const scope = new CancellationScope();
    const turn = conversation.startTurn(message, () => scope.cancel());
    publish();
    const result = await scope.run(() => runTurn({ ...turn, workflowId: info.workflowId, runId: info.runId }));
    conversation.finishTurn(result);
    publish();
    // Nothing queued: move now rather than at the next message, so the old version drains.
    if (conversation.queued === 0 && targetMayHaveChanged() && (await targetChanged())) return await moveToTarget();
  }

  await handlersFinished();
  return close('ended');

  function nextRunInput(): ConversationInput {
    return {
      conversationId,
      settings,
      closeWhenIdle: input.closeWhenIdle,
      state: conversation.state(),
      previousRunId: info.runId,
    };
  }

  /** Temporal says this pinned run's target version may have changed (see version-routing.ts for why only "may"). */
  function targetMayHaveChanged(): boolean {
    const { targetWorkerDeploymentVersionChanged, currentDeploymentVersion } = workflowInfo();
    return (
      targetWorkerDeploymentVersionChanged && currentDeploymentVersion !== undefined && patched(UPGRADE_BETWEEN_TURNS)
    );
  }

  async function targetChanged(): Promise<boolean> {
    const pinned = workflowInfo().currentDeploymentVersion!;
    try {
      return shouldMove(pinned, await readDeploymentRouting({ deploymentName: pinned.deploymentName }));
    } catch (error) {
      log.warn('could not read the worker deployment; staying on this version for now', {
        conversationId,
        error: String(error),
      });
      return false;
    }
  }

  /** Continue as new on the deployment's target version (then pinned there), not on this run's version. */
  async function moveToTarget(): Promise<never> {
    conversation.handOver();
    await handlersFinished();
    const continueOnTarget = makeContinueAsNewFunc<typeof conversationWorkflow>({
      initialVersioningBehavior: 'AUTO_UPGRADE',
    });
    return await continueOnTarget(nextRunInput());
  }

  async function lookForEarlierRun(): Promise<EarlierRun> {
    try {
      return await findEarlierRun({ workflowId: info.workflowId, runId: info.runId });
    } catch (error) {
      log.warn('could not look for earlier runs of this conversation; going on as if there were none', {
        conversationId,
        error: String(error),
      });
      return { found: false, unavailable: String(error) };
    }
  }

  /** Wait for the handlers before the run closes or continues as new; waiting event polls are answered first. */
  async function handlersFinished(): Promise<void> {
    polls.closing = true;
    await condition(allHandlersFinished);
    // Not closing after all (a message came meanwhile): polls wait again.
    polls.closing = false;
  }

  function close(closedBecause: ConversationOutcome['closedBecause']): ConversationOutcome {
    const outcome = conversation.close(closedBecause);
    publish();
    return outcome;
  }
}
