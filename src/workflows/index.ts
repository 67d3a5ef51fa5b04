export { conversationWorkflow } from './conversation.js';
export { agentTurnWorkflow, type AgentTurnInput } from './agent-turn.js';
export { scheduledMessageWorkflow } from './scheduled-message.js';
export { spendLedgerWorkflow } from './spend-ledger.js';
