export { conversationWorkflow } from './conversation.js';
