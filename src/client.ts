import { randomUUID } from 'node:crypto';
import { DurableAgentClient } from './client/index.js';

/**
 * Ask the agent one message and print its answer: `npm run client -- "What is 2 + 40?"`. A worker must be running
 * (`npm start`); the cluster and task queue come from the environment as for every client (TEMPORAL_ADDRESS,
 * DURABLE_AGENT_TASK_QUEUE, ...). Each run starts a conversation of its own.
 */
async function run(): Promise<void> {
  const message = process.argv.slice(2).join(' ').trim();
  if (message === '') throw new Error('Give the message to send, e.g. npm run client -- "What is 2 + 40?"');
  const client = await DurableAgentClient.connect();
  try {
    const conversationId = `client-${randomUUID()}`;
    const result = await client.ask(conversationId, message);
    console.log(`conversation ${conversationId} (${result.stopReason})`);
    console.log(result.answer);
  } finally {
    await client.close();
  }
}

run().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
