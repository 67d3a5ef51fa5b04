import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/worker/mcp/config.js';
import { startTestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { conversationWorkflowId, type ConversationOutcome } from '../../src/workflows/definitions.js';
import { freePort, publishedServerEntry, startGate, useTemporaryDirectories } from '../mcp/helpers.js';
import { allText, canary, historiesOfEveryRun, occurrences } from '../helpers/secrets.js';
import { toolResults } from '../helpers/transcript.js';

/**
 * No secret ever enters history (issue 15, item 1). Real turns through the workflow, with MCP servers that fail in
 * every way that used to quote a secret: a URL with the secret in its path and query that stops answering between
 * the listing and the call, a header the server rejects (and echoes), stdio servers that print their key from `env`
 * and exit. Every event of every run, payloads decoded, must be free of the secret.
 */

let env: TestWorkflowEnvironment;
const temporaryDirectory = useTemporaryDirectories();
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(cleanups.reverse().map((cleanup) => cleanup()));
  await env?.teardown();
});

describe('secrets of MCP servers', () => {
  it('appear nowhere in the history of any run, across a continue-as-new', async () => {
    const secret = canary('secret');
    const literal = canary('literal');
    const upstream = await startTestMcpServer({ transport: 'http', port: 0 });
    cleanups.push(() => upstream.close());
    const refusing = await startGate('http://127.0.0.1:9/mcp', 401);
    cleanups.push(() => refusing.close());
    const closedPort = await freePort();
    const printKey = 'console.error("starting with key " + process.env.API_KEY); process.exit(1)';
    const webUrl = `http://127.0.0.1:${upstream.port}/mcp/\${DA_SECRET}?key=\${DA_SECRET}`;
    const config = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          web: { url: webUrl },
          offline: { url: `http://127.0.0.1:${closedPort}/mcp?token=\${DA_SECRET}` },
          refused: { url: refusing.url, headers: { Authorization: 'Bearer ${DA_SECRET}', 'X-Api-Key': literal } },
          leaky: { command: process.execPath, args: ['-e', printKey], env: { API_KEY: '${DA_SECRET}' } },
          'leaky-literal': { command: process.execPath, args: ['-e', printKey], env: { API_KEY: literal } },
        },
      }),
      'mcp.json',
      { DA_SECRET: secret },
    );

    const agent = await startTestAgent({
      env,
      mcpServers: config,
      script: [
        async () => {
          await upstream.close(); // gone between the listing and the call: every attempt ends in "could not reach"
          return { toolCalls: [{ name: 'web__echo', arguments: { text: 'hello' } }] };
        },
        { content: 'The echo service is down.' },
        { content: 'Second turn answered.' },
      ],
    });
    cleanups.push(() => agent.close());

    const conversationId = randomUUID();
    const handle = await agent.startConversation(conversationId, {
      // One turn per run, so the first turn's result and events are carried into the second run's input.
      settings: { maxTurnsPerRun: 1 },
      messages: [
        { id: randomUUID(), content: 'Echo hello' },
        { id: randomUUID(), content: 'And again' },
      ],
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;

    const runs = await historiesOfEveryRun(env.client, handle.workflowId, handle.firstExecutionRunId);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const text = runs.map(({ history }) => allText(history)).join('\n');
    // The secrets are nowhere, nor in what the model was sent...
    expect(occurrences(text, secret)).toEqual([]);
    expect(occurrences(text, literal)).toEqual([]);
    const sentToModel = allText(agent.model.requests);
    expect(occurrences(sentToModel, secret)).toEqual([]);
    expect(occurrences(sentToModel, literal)).toEqual([]);
    // ...while the failures are there, quoted as written.
    expect(text).toContain(`could not reach http://127.0.0.1:${upstream.port}/mcp/\${DA_SECRET}?key=\${DA_SECRET}`);

    // The broken servers did not stop the turns.
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', answer: 'Second turn answered.' });
    const [echo] = toolResults(agent.model.requests[1]!.messages);
    expect(echo?.content).toMatch(/^Error: the tool web__echo is unavailable right now/);
  });

  it('are only the secret values: a ${VAR} path reaches the server as expanded, a secret-looking one never enters history', async () => {
    const projects = temporaryDirectory();
    const token = canary('token');
    writeFileSync(path.join(projects, 'notes.md'), `Deploy with ${token} on Friday.\n`);
    const config = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          files: {
            command: process.execPath,
            args: [publishedServerEntry('server-filesystem'), '${DA_PROJECTS}'],
            env: { API_TOKEN: '${DA_TOKEN}' },
          },
        },
      }),
      'mcp.json',
      { DA_PROJECTS: projects, DA_TOKEN: token },
    );

    const agent = await startTestAgent({
      env,
      mcpServers: config,
      script: [
        { toolCalls: [{ name: 'files__list_allowed_directories', arguments: {} }] },
        // As a model does: read a file under the directory the server named.
        (request) => {
          const [allowed] = toolResults(request.messages);
          const directory =
            allowed?.content
              .split('\n')
              .find((line) => line.includes(path.sep))
              ?.trim() ?? '';
          return { toolCalls: [{ name: 'files__read_text_file', arguments: { path: `${directory}/notes.md` } }] };
        },
        { content: 'Friday.' },
      ],
    });
    cleanups.push(() => agent.close());

    const conversationId = randomUUID();
    const result = await agent.ask('When do we deploy?', { conversationId });

    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Friday.' });
    const [allowed, notes] = toolResults(agent.model.requests[2]!.messages);
    expect(allowed?.content).toContain(projects);
    expect(notes?.content).toBe('Deploy with ${DA_TOKEN} on Friday.\n');
    const history = allText(await env.client.workflow.getHandle(conversationWorkflowId(conversationId)).fetchHistory());
    expect(history).toContain(`${projects}/notes.md`);
    expect(occurrences(history, token)).toEqual([]);
    expect(occurrences(allText(agent.model.requests), token)).toEqual([]);
  });
});
