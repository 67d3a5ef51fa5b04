import { allHandlersFinished, condition } from '@temporalio/workflow';
import type { ConversationCore } from './conversation-core.js';
import {
  approveUpdate,
  askUpdate,
  type ApproveRequest,
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
import { handleEventStream, type EventPolls } from './event-polls.js';
import { handleInputRequests } from './input-handlers.js';
import type { TurnTraces } from './turn-traces.js';
import { refusingUndecodable } from './undecodable-guard.js';

/**
 * Wire a conversation's rules to Temporal: every public signal, update and query of docs/protocol.md, and the internal
 * event polls and input requests. Every handler refuses what the worker could not decrypt (a client with the wrong key)
 * instead of failing the task.
 *
 * Keep this order: signals and updates that arrived before their handler are delivered as it is set, so the order of
 * these calls is part of what replay must reproduce.
 */
export function setConversationHandlers(
  conversation: ConversationCore,
  conversationId: string,
  traces: TurnTraces,
): EventPolls {
  const setHandler = refusingUndecodable();
  setHandler(
    userMessageSignal,
    (message) => {
      traces.arrived(message.id);
      conversation.receive(message);
    },
    { description: described.userMessage },
  );
  setHandler(
    askUpdate,
    (message) => {
      traces.arrived(message.id);
      return conversation.ask(message, (settled) => condition(settled));
    },
    {
      validator: (message: IncomingMessage) => conversation.validateAsk(message),
      description: described.ask,
    },
  );
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
  return polls;
}

/** Wait for the handlers before the run closes or continues as new; waiting event polls are answered first. */
export async function handlersFinished(polls: EventPolls): Promise<void> {
  polls.closing = true;
  await condition(allHandlersFinished);
  // Not closing after all (a message came meanwhile): polls wait again.
  polls.closing = false;
}
