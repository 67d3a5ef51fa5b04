import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { startTestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { askUpdate } from '../../src/workflows/definitions.js';
import { log } from '../log.js';

const CALLS = 20;
const CHARS = 51_200;
const TURNS = 8;

/**
 * What a model call pays when the worker did not run the round's tool calls and reads their results by query:
 * `node bench/dist/bench/long/fallback.js` (after `tsc -p tsconfig.bench.json` and `npm run build`). Turns of 20 calls
 * of our test server's `big` tool (50 KB each), with a worker that keeps its results and one that keeps none
 * (`toolResults: false`), twice each, on the dev server; the model call after each round timed from its activity's
 * started to its completed event.
 */
async function main(): Promise<void> {
  const env = await createLocalEnvironment();
  const mcp = await startTestMcpServer({ transport: 'http' });
  try {
    const server = {
      name: 'test',
      transport: 'http' as const,
      url: mcp.url,
      headers: {},
      allowTools: undefined,
      denyTools: [],
      timeoutMs: 60_000,
      disabled: false,
    };
    const turn = [
      { toolCalls: Array.from({ length: CALLS }, () => ({ name: 'test__big', arguments: { chars: CHARS } })) },
      { content: 'done' },
    ];
    for (const keep of [true, false, true, false]) {
      const agent = await startTestAgent({
        env,
        script: Array.from({ length: TURNS }, () => turn).flat(),
        mcpServers: [server],
        workerOptions: { toolResultMaxChars: 60_000, ...(keep ? {} : { toolResults: false as const }) },
      });
      try {
        const handle = await agent.startConversation(randomUUID(), {
          settings: { stream: false, maxInputTokens: 200_000, budget: { maxTokens: 2_000_000 } },
        });
        for (let index = 1; index <= TURNS; index++) {
          await handle.executeUpdate(askUpdate, { args: [{ id: `m-${index}`, content: `turn ${index}` }] });
        }
        const times = await afterRoundCalls(env.client, handle.workflowId);
        const mean = times.reduce((sum, time) => sum + time, 0) / times.length;
        log(
          `${keep ? 'results held by the worker' : 'results read by query'}: the model call after a round of ` +
            `${CALLS} x ${CHARS} characters took ${mean.toFixed(1)} ms on average (${times.map(Math.round).join(' ')})`,
        );
      } finally {
        await agent.close();
      }
    }
  } finally {
    await mcp.close();
    await env.teardown();
  }
}

/** Started-to-completed ms of every run's model calls after a round of tool calls (each run's second, fourth, ...). */
async function afterRoundCalls(client: Client, workflowId: string): Promise<number[]> {
  const times: number[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const models = new Set<string>();
    const started = new Map<string, number>();
    const durations: number[] = [];
    for (const event of history.events ?? []) {
      const at = Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') {
        models.add(String(event.eventId));
      }
      const start = event.activityTaskStartedEventAttributes;
      if (start) started.set(String(start.scheduledEventId), at);
      const done = event.activityTaskCompletedEventAttributes;
      if (done && models.has(String(done.scheduledEventId))) {
        durations.push(at - (started.get(String(done.scheduledEventId)) ?? at));
      }
    }
    times.push(...durations.filter((_, index) => index % 2 === 1));
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return times;
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
