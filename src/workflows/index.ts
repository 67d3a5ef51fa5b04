export { conversationWorkflow } from './conversation.js';
export { agentTurnWorkflow, type AgentTurnInput } from './agent-turn.js';
