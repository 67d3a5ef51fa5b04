import { DurableAgentClient } from 'durable-agent';

const agent = await DurableAgentClient.connect(); // TEMPORAL_ADDRESS (default localhost:7233), DURABLE_AGENT_TASK_QUEUE
// Queue a message without waiting: creates the conversation if needed; the message id makes a retry safe.
await agent.send('support-42', 'My order has not arrived.', { messageId: 'ticket-981-1' });
// Or wait for the answer (this creates the conversation too, or reopens one an idle timeout closed).
const result = await agent.ask('support-42', 'Where is my order?', { waitTimeoutMs: 120_000 });
console.log(result.answer, result.stopReason, result.toolCalls, result.usage);
for await (const message of agent.messages('support-42')) console.log(message.role, message.content);
await agent.close();
