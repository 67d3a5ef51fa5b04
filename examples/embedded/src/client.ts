import { DurableAgentClient } from 'durable-agent';
import { TASK_QUEUE } from './agent.js';

async function run() {
  const agent = await DurableAgentClient.connect({ taskQueue: TASK_QUEUE });
  try {
    const result = await agent.ask('order-A-17', process.argv[2] ?? 'What do 2 and 40 add up to?');
    console.log(result.answer);
  } finally {
    await agent.close();
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
