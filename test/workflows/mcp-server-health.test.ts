import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../src/worker/mcp/config.js';
import type { Script } from '../../src/testing/scripted-model/script.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { serveMcpOverHttp, type ServedMcp } from '../../src/testing/mcp-http.js';
import type { ConversationOutcome } from '../../src/workflows/definitions.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';
import { allText } from '../helpers/secrets.js';
import { toolResults } from '../helpers/transcript.js';
import { freePort, httpServer, stdioServer, useTemporaryDirectories } from '../mcp/helpers.js';

/**
 * MCP servers through real turns: one broken server does not take the agent down (issue 15, item 2), and a server
 * restarted with other tools is offered with them at the next turn (item 4). On the dev server, which keeps the
 * activity summaries the Web UI shows (the time-skipping server drops them); nothing here waits on a timer.
 */

let env: TestWorkflowEnvironment;
let crm: Crm;
const cleanups: Array<() => Promise<unknown>> = [];
const temporaryDirectory = useTemporaryDirectories();

beforeAll(async () => {
  env = await createLocalEnvironment();
  crm = await startCrm();
});

afterAll(async () => {
  await Promise.allSettled(cleanups.reverse().map((cleanup) => cleanup()));
  await crm?.close();
  await env?.teardown();
});

async function agentWith(script: Script, mcpServers: McpServerConfig[]): Promise<TestAgent> {
  const agent = await startTestAgent({ env, script, mcpServers });
  cleanups.push(() => agent.close());
  return agent;
}

const toolNames = (request: { tools: Array<{ type: string; function?: { name: string } }> | null }) =>
  (request.tools ?? []).map((tool) => tool.function?.name);

describe('broken MCP servers', () => {
  it('are left out of the turn, which goes on with the other servers, and the omission is visible', async () => {
    const starts = path.join(temporaryDirectory(), 'starts.txt');
    writeFileSync(starts, '');
    const crashAtStart = `require('fs').appendFileSync(${JSON.stringify(starts)}, 'start\\n'); process.exit(1)`;
    const refusedPort = await freePort();
    const agent = await agentWith(
      [
        { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
        { content: 'Ada works at Analytical Engines.' },
        { content: 'Still here.' },
      ],
      [
        crm.config(),
        stdioServer('missing', 'durable-agent-no-such-command', []),
        stdioServer('crashy', process.execPath, ['-e', crashAtStart]),
        httpServer('offline', `http://127.0.0.1:${refusedPort}/mcp`),
      ],
    );
    const conversationId = randomUUID();
    const handle = await agent.startConversation(conversationId, {
      messages: [
        { id: randomUUID(), content: 'Where does Ada work?' },
        { id: randomUUID(), content: 'Anything else?' },
      ],
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;

    // The turns completed with the healthy server's tools, and the first model call was not retried for the others.
    const result = outcome.state.lastResult!;
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Still here.' });
    expect(agent.model.requests).toHaveLength(3);
    expect(toolNames(agent.model.requests[0]!)).toContain('crm__find_user');
    expect(toolNames(agent.model.requests[0]!).every((name) => name?.startsWith('crm__'))).toBe(true);
    expect(toolResults(agent.model.requests[1]!.messages)[0]?.content).toContain('Ada Lovelace');

    // The turn result names each server left out, with the reason.
    expect(result.unavailableServers).toEqual([
      { server: 'missing', reason: expect.stringMatching(/could not start "durable-agent-no-such-command".*ENOENT/) },
      { server: 'crashy', reason: expect.stringMatching(/could not start .*Connection closed/) },
      { server: 'offline', reason: expect.stringMatching(/could not reach http:\/\/127\.0\.0\.1:\d+\/mcp/) },
    ]);
    // A stream event says so while the turn runs.
    const events = outcome.state.streamEvents ?? [];
    const unavailable = events.filter((event) => event.type === 'servers_unavailable');
    expect(unavailable).toEqual([
      expect.objectContaining({ turn: 1, servers: result.unavailableServers }),
      expect.objectContaining({ turn: 2, servers: result.unavailableServers }),
    ]);
    // The next model call's summary in the Web UI says what the turn went without.
    const history = allText(await handle.fetchHistory());
    expect(history).toContain('round 2 · without missing, crashy, offline');
    // The second turn did not start the crashing server again: it is in its backoff. The first turn's one attempt
    // started it once: a stdio server is spoken to in the 2025-11-25 session without a version probe (docs/mcp.md).
    expect(readFileSync(starts, 'utf8')).toBe('start\n');
  });
});

describe('a restarted MCP server', () => {
  it('is offered with its new tools at the next turn', async () => {
    const versions: ServedMcp[] = [];
    cleanups.push(() => Promise.all(versions.map((version) => version.close())));
    const serve = async (tool: string, port = 0) => {
      const served = await serveMcpOverHttp(
        () => {
          const server = new McpServer({ name: 'deployable', version: '1.0.0' });
          server.registerTool(
            tool,
            { description: `${tool} of this deployment`, annotations: { readOnlyHint: true } },
            () => ({
              content: [{ type: 'text', text: `${tool} answered` }],
            }),
          );
          return server;
        },
        { port },
      );
      versions.push(served);
      return served;
    };
    const first = await serve('lookup_v1');
    const agent = await agentWith(
      [
        { toolCalls: [{ name: 'deploy__lookup_v1' }] },
        async () => {
          // Redeployed between the two turns: same port, another tool.
          await first.close();
          await serve('lookup_v2', first.port);
          return { content: 'First turn done.' };
        },
        { toolCalls: [{ name: 'deploy__lookup_v2' }] },
        { content: 'Second turn done.' },
      ],
      [httpServer('deploy', first.url)],
    );
    const handle = await agent.startConversation(randomUUID(), {
      messages: [
        { id: randomUUID(), content: 'Look it up' },
        { id: randomUUID(), content: 'And now?' },
      ],
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', answer: 'Second turn done.' });
    expect(toolNames(agent.model.requests[0]!)).toEqual(['deploy__lookup_v1']);
    expect(toolNames(agent.model.requests[2]!)).toEqual(['deploy__lookup_v2']);
    expect(toolResults(agent.model.requests[3]!.messages).map(({ content }) => content)).toEqual([
      'lookup_v1 answered',
      'lookup_v2 answered',
    ]);
    expect(outcome.state.lastResult?.unavailableServers).toBeUndefined();
  });
});
