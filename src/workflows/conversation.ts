import {
  CancellationScope,
  condition,
  type ContinueAsNewOptions,
  log,
  makeContinueAsNewFunc,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import { handlersFinished, setConversationHandlers } from './conversation-handlers.js';
import { ConversationCore } from './conversation-core.js';
import type { ConversationInput, ConversationOutcome } from './definitions.js';
import { targetChanged, targetMayHaveChanged } from './deployment-target.js';
import { lookForEarlierRun } from './earlier-run-lookup.js';
import { continuedInput, lookBack } from './earlier-runs.js';
import { linkSubAgents } from './sub-agent-approvals.js';
import { linkSubAgentInputs } from './sub-agent-inputs.js';
import { runTurn } from './turn.js';
import { TurnTraces } from './turn-traces.js';
import { refuseUndecodableInput } from './undecodable-guard.js';
import { Visibility } from './visibility.js';
import { waitEnded, waitStarted } from './wait-metrics.js';
import { runHistoryFull } from './run-size.js';

export { DEFAULT_MAX_TURNS_PER_RUN } from './conversation-core.js';

/**
 * One conversation: a queue of user messages answered one turn at a time, driven by signals and updates,
 * continued as new between turns so it can live for months. The state and its rules are in ConversationCore; this
 * function wires it to Temporal and runs the turns.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  refuseUndecodableInput(input);
  const { conversationId } = input;
  const info = workflowInfo();
  const visibility = new Visibility(input.settings?.tenant);
  const conversation: ConversationCore = new ConversationCore(input, {
    continueAsNewSuggested: () => workflowInfo().continueAsNewSuggested,
    changed: () => visibility.describe(conversation.status()),
    warn: (message, attributes) => log.warn(message, attributes),
    // The phase goes between `running` and `awaiting_approval`: the search attribute too, so lists find it.
    approvalsChanged: () => publish(),
    // Waiting for a person shows in the search attribute too (`awaiting_input`), not only in the current details.
    inputsChanged: () => publish(),
    mayDropBusyMessage: () => patched('skip-if-busy'),
  });
  const { settings } = conversation;
  // A run started from an ended conversation's state only keeps it readable: it shows in no list of its own.
  const listed = input.state?.ended !== true;
  const publish = () =>
    listed ? visibility.publish(conversation.status()) : visibility.describe(conversation.status());

  const traces = new TurnTraces();
  const polls = setConversationHandlers(conversation, conversationId, traces);
  // Set after the others, so the order of the handlers that releases before sub-agents set stays as it was.
  const subAgents = linkSubAgents(
    conversation.approvals,
    linkSubAgentInputs(conversation.inputs, () => conversation.runningTurn),
  );

  // A run that did not continue from another may have been started over closed runs of the same id, by a client that
  // did not carry their state (earlier-runs.ts): it looks back before it answers anything, and continues from them.
  if (info.continuedFromExecutionRunId === undefined) {
    const earlier = await lookForEarlierRun(info.workflowId, info.runId, conversationId);
    const found = lookBack(input, earlier);
    if (found.kind !== 'go-on') {
      log.warn('this run was started over closed runs of its conversation without their state; continuing from them', {
        conversationId,
        earlierRunId: found.runId,
        ended: found.kind === 'ended',
      });
      if (found.kind === 'ended') conversation.end();
      return await handOver(() => continuedInput(input, earlier, conversation.state()));
    }
  }

  // A run that starts with a message starts its turn in this same workflow task, which publishes `running`.
  if (conversation.queued === 0) publish();
  else visibility.describe(conversation.status());

  for (;;) {
    if (input.closeWhenIdle && conversation.queued === 0 && !conversation.ended) {
      await handlersFinished(polls);
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
      await handlersFinished(polls);
      return close('idle');
    }
    if (conversation.ended) break;
    // Between turns a run pinned to a Worker Deployment Version that is no longer the target moves to the target: it
    // continues as new there. Without versioning the flag is never set, and nothing here runs.
    if (targetMayHaveChanged() && (await targetChanged(conversationId))) return await moveToTarget();
    const message = conversation.nextMessage();
    if (message === undefined) return await handOver(nextRunInput);
    // Inline, not in a function of its own: an extra await here could reorder commands against the recorded histories
    // when one activation resolves several things at once.
    const scope = new CancellationScope();
    const turn = conversation.startTurn(message, () => scope.cancel());
    publish();
    const traced = traces.start(turn);
    const result = await scope.run(() =>
      traces.within(traced, () => runTurn({ ...turn, workflowId: info.workflowId, runId: info.runId, subAgents })),
    );
    traces.finish(traced, result);
    conversation.finishTurn(result);
    if (runHistoryFull()) conversation.historyPassedShare();
    publish();
    // Nothing queued: move now rather than at the next message, so the old version drains.
    if (conversation.queued === 0 && targetMayHaveChanged() && (await targetChanged(conversationId)))
      return await moveToTarget();
  }

  await handlersFinished(polls);
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

  /** Continue as new on the deployment's target version (then pinned there), not on this run's version. */
  function moveToTarget(): Promise<never> {
    return handOver(nextRunInput, { initialVersioningBehavior: 'AUTO_UPGRADE' }, 'new_version');
  }

  /**
   * Every continue-as-new goes through here: asks still waiting are refused as rolling over, the handlers finish, and
   * only then is the next run's input read (`next`), since a handler that finished meanwhile may have changed the state.
   */
  async function handOver(
    next: () => ConversationInput,
    options?: ContinueAsNewOptions,
    reason: 'continue_as_new' | 'new_version' = 'continue_as_new',
  ): Promise<never> {
    conversation.handOver();
    // The pause new asks see (refused as rolling over until the next run takes them): its span and metrics.
    waitStarted(reason, info.runId, { 'durable_agent.turns': conversation.status().turns });
    await handlersFinished(polls);
    waitEnded(reason, info.runId, undefined, 'continued');
    return await makeContinueAsNewFunc<typeof conversationWorkflow>(options)(next());
  }

  function close(closedBecause: ConversationOutcome['closedBecause']): ConversationOutcome {
    const outcome = conversation.close(closedBecause);
    publish();
    return outcome;
  }
}
