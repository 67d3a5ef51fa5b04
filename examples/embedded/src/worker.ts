import { fileURLToPath } from 'node:url';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection, Worker } from '@temporalio/worker';
import { McpPool } from 'durable-agent/worker';
import OpenAI from 'openai';
import { createActivities } from './activities.js';
import { agentPlugin, mcpServers, TASK_QUEUE } from './agent.js';
import { inMemoryOrderStore } from './order-store.js';

/** One order to ask about; a real worker passes its database. */
const demoOrders = inMemoryOrderStore([{ id: 'A-17', customer: 'Ada', items: 2, subtotal: 40, country: 'NL' }]);

async function run() {
  // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, a temporal.toml profile: the settings every Temporal tool reads.
  const config = loadClientConnectConfig();
  const connection = await NativeConnection.connect(config.connectionOptions);
  const mcp = new McpPool(mcpServers);
  try {
    const worker = await Worker.create({
      connection,
      namespace: config.namespace ?? 'default',
      taskQueue: TASK_QUEUE,
      workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
      activities: createActivities({
        warehouse: { reserve: async () => undefined },
        mailer: { send: async (to, body) => console.log(`To ${to}:\n${body}`) },
      }),
      plugins: [agentPlugin({ openai: new OpenAI({ maxRetries: 0 }), mcp, orders: demoOrders })],
    });
    await worker.run();
  } finally {
    await mcp.close();
    await connection.close();
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
