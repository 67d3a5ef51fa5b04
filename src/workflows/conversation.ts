import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { ConversationCore } from './conversation-core.js';
import {
  askUpdate,
  type ConversationInput,
  type ConversationOutcome,
  endSignal,
  type IncomingMessage,
  interruptSignal,
  modelContextQuery,
  statusQuery,
  transcriptQuery,
  userMessageSignal,
} from './definitions.js';
import { handleEventStream } from './event-polls.js';
import { runTurn } from './turn.js';
import { Visibility } from './visibility.js';

export { DEFAULT_MAX_TURNS_PER_RUN } from './conversation-core.js';

/**
 * One conversation: a queue of user messages answered one turn at a time, driven by signals and updates,
 * continued as new between turns so it can live for months. The state and its rules are in ConversationCore; this
 * function wires it to Temporal and runs the turns.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  const { conversationId } = input;
  const info = workflowInfo();
  const visibility = new Visibility();
  const conversation: ConversationCore = new ConversationCore(input, {
    continueAsNewSuggested: () => workflowInfo().continueAsNewSuggested,
    changed: () => visibility.describe(conversation.status()),
    warn: (message, attributes) => log.warn(message, attributes),
  });
  const { settings } = conversation;
  const publish = () => visibility.publish(conversation.status());

  // Keep this order: signals and updates that arrived before their handler are delivered as it is set, so the order
  // of these calls is part of what replay must reproduce.
  setHandler(userMessageSignal, (message) => conversation.receive(message));
  setHandler(askUpdate, (message) => conversation.ask(message, (settled) => condition(settled)), {
    validator: (message: IncomingMessage) => conversation.validateAsk(message),
  });
  setHandler(interruptSignal, (request) => conversation.interrupt(request?.reason));
  const polls = handleEventStream(conversation.events, conversationId);
  setHandler(endSignal, () => conversation.end());
  setHandler(statusQuery, () => conversation.status());
  setHandler(transcriptQuery, (request) => conversation.transcriptPage(request));
  setHandler(modelContextQuery, (request) => conversation.modelContext(request));

  // A run that starts with a message starts its turn in this same workflow task, which publishes `running`.
  if (conversation.queued === 0) publish();
  else visibility.describe(conversation.status());

  for (;;) {
    if (input.closeWhenIdle && conversation.queued === 0 && !conversation.ended) {
      await handlersFinished();
      if (conversation.queued === 0) return close('completed');
    }
    const ready = () => conversation.hasWork;
    // `condition(fn, undefined)` would time out at once: pass a timeout only when one is configured.
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
    const message = conversation.nextMessage();
    if (message === undefined) {
      await handlersFinished();
      if (conversation.asksWaiting) continue;
      return continueAsNew<typeof conversationWorkflow>({
        conversationId,
        settings,
        closeWhenIdle: input.closeWhenIdle,
        state: conversation.state(),
        previousRunId: info.runId,
      });
    }
    // Inline, not in a function of its own: an extra await here could reorder commands against the recorded histories
    // when one activation resolves several things at once.
    const scope = new CancellationScope();
    const turn = conversation.startTurn(message, () => scope.cancel());
    publish();
    const result = await scope.run(() => runTurn({ ...turn, workflowId: info.workflowId, runId: info.runId }));
    conversation.finishTurn(result);
    publish();
  }

  await handlersFinished();
  return close('ended');

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
