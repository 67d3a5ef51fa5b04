import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../../src/worker/mcp/config.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import type { Script } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  askUpdate,
  endSignal,
  interruptSignal,
  type TurnResult,
  userMessageSignal,
} from '../../src/workflows/definitions.js';
import { expectValidToolPairing } from '../helpers/transcript.js';
import { waitForStatus } from '../helpers/status.js';

/**
 * The workflow suite once more with `maxCachedWorkflows: 0`: the worker keeps no workflow in memory, so every workflow
 * task (and every query) replays the history from the start. Each conversation runs on a normal worker and on an
 * uncached one; both must give the same results and send the model the same requests. (The activities' transcript
 * cache is a separate, per-process cache; the worker-crash tests in test/reliability exercise its misses.)
 * On the dev server, because the time-skipping test server does not report sticky task queues in history.
 */

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
const agents: TestAgent[] = [];
const servers: RunningTestMcpServer[] = [];

beforeAll(async () => {
  env = await createLocalEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await Promise.allSettled(servers.map((server) => server.close()));
  await env?.teardown();
});

type Handle = WorkflowHandle<typeof conversationWorkflow>;
type Mode = 'cached' | 'uncached';

const usage = { prompt_tokens: 10, completion_tokens: 5 };
const call = (name: string, args: Record<string, string | number> = {}) => ({ name: `test__${name}`, arguments: args });

function server(): HttpServerConfig {
  return {
    name: 'test',
    transport: 'http',
    url: mcp.url,
    headers: {},
    allowTools: undefined,
    denyTools: [],
    timeoutMs: 60_000,
    disabled: false,
  };
}

async function agentFor(mode: Mode, script: Script): Promise<TestAgent> {
  const agent = await startTestAgent({
    env,
    script,
    mcpServers: [server()],
    workerOptions: mode === 'uncached' ? { worker: { maxCachedWorkflows: 0 } } : {},
  });
  agents.push(agent);
  return agent;
}

/** What must not depend on caching: everything in the result but its duration, and what the model was sent. */
function comparable(agent: TestAgent, results: TurnResult[]) {
  return {
    results: results.map(
      ({ durationMs: _durationMs, conversationId: _conversationId, messageId: _id, ...rest }) => rest,
    ),
    // Tool call ids are derived from the conversation id, which differs between the two runs: compare the rest.
    requests: agent.model.requests.map((request) => ({
      toolChoice: request.toolChoice,
      messages: request.messages.map((message) =>
        message.role === 'assistant'
          ? { role: message.role, content: message.content, tools: message.tool_calls?.map((entry) => entry.type) }
          : message.role === 'tool'
            ? { role: message.role, content: message.content }
            : message,
      ),
    })),
  };
}

/** Workflow task queue kinds in the history: a worker without a cache never gets a task on its sticky queue. */
async function taskQueueKinds(handle: Handle): Promise<Set<string>> {
  const history = await handle.fetchHistory();
  return new Set(
    (history.events ?? []).flatMap((event) =>
      event.workflowTaskScheduledEventAttributes
        ? [String(event.workflowTaskScheduledEventAttributes.taskQueue?.kind)]
        : [],
    ),
  );
}

interface Scenario {
  script: Script;
  run(agent: TestAgent, id: string): Promise<{ handle: Handle; results: TurnResult[] }>;
}

const scenarios: Record<string, Scenario> = {
  'a tool chain (echo, set_value, increment)': {
    script: [
      { toolCalls: [call('echo', { text: 'hello' })], usage },
      { toolCalls: [call('set_value', { key: 'colour', value: 'blue' })], usage },
      { toolCalls: [call('increment', { key: 'chain' })], usage },
      { content: 'Echoed, stored and counted.', usage },
    ],
    async run(agent, id) {
      const handle = await agent.startConversation(id, {
        messages: [{ id: 'm-1', content: 'Run the chain.' }],
        closeWhenIdle: true,
      });
      const outcome = await handle.result();
      return { handle, results: outcome.state.lastResult ? [outcome.state.lastResult] : [] };
    },
  },
  'parallel tools in one round': {
    script: [
      {
        toolCalls: [
          call('slow', { delayMs: 300 }),
          call('echo', { text: 'fast' }),
          call('set_value', { key: 'k', value: 'v' }),
        ],
        usage,
      },
      { content: 'All three came back.', usage },
    ],
    async run(agent, id) {
      const handle = await agent.startConversation(id, {
        messages: [{ id: 'm-1', content: 'Three at once.' }],
        closeWhenIdle: true,
      });
      const outcome = await handle.result();
      return { handle, results: outcome.state.lastResult ? [outcome.state.lastResult] : [] };
    },
  },
  'an interrupt in a tool call, then the next turn': {
    script: [
      { toolCalls: [call('hang')], usage },
      { content: 'Something else, then.', usage },
    ],
    async run(agent, id) {
      const handle = await agent.startConversation(id);
      await handle.signal(userMessageSignal, { id: 'm-1', content: 'Do the slow thing.' });
      await waitForStatus(handle, (status) => status.currentTurn?.activity.startsWith('tools') ?? false, 600);
      await handle.signal(interruptSignal, { reason: 'changed my mind' });
      const interrupted = await waitForStatus(handle, (status) => status.phase === 'idle' && status.turns === 1, 600);
      const next = await handle.executeUpdate(askUpdate, { args: [{ id: 'm-2', content: 'Something else.' }] });
      await handle.signal(endSignal, {});
      await handle.result();
      return { handle, results: [interrupted.lastResult!, next] };
    },
  },
};

describe('the workflow without a workflow cache (maxCachedWorkflows: 0): a replay on every task', () => {
  it.each(Object.keys(scenarios))('no cache: %s gives the same results as with the cache', async (name) => {
    const scenario = scenarios[name]!;
    const runs = {} as Record<Mode, { comparable: ReturnType<typeof comparable>; kinds: Set<string> }>;
    for (const mode of ['cached', 'uncached'] as const) {
      // A server of its own per run, so both start from the same stored values (at 2026-07-28 they are the server's).
      mcp = await startTestMcpServer({ transport: 'http' });
      servers.push(mcp);
      const agent = await agentFor(mode, scenario.script);
      const { handle, results } = await scenario.run(agent, `${mode}-${name.replace(/\W+/g, '-')}`);
      for (const request of agent.model.requests) expectValidToolPairing(request.messages);
      runs[mode] = { comparable: comparable(agent, results), kinds: await taskQueueKinds(handle) };
      await agent.close();
    }
    expect(runs.uncached.comparable).toEqual(runs.cached.comparable);
    expect(runs.uncached.comparable.results.length).toBeGreaterThan(0);
    expect(runs.uncached.comparable.requests.length).toBeGreaterThan(1);
    // Proof that the uncached worker really kept nothing: none of its workflow tasks went to a sticky queue.
    expect([...runs.uncached.kinds]).toEqual(['1']); // TASK_QUEUE_KIND_NORMAL
    expect([...runs.cached.kinds]).toContain('2'); // TASK_QUEUE_KIND_STICKY
  });
});
