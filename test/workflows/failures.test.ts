import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import { serveMcpOverHttp } from '../../src/testing/mcp-http.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { toolResults } from '../helpers/transcript.js';
import { countTestServerEvents } from '../../src/testing/mcp-test-server.js';
import { stdioServer, testServerEntry, testServerStdio } from '../mcp/helpers.js';

const bed = useTimeSkippingWithCrm();

const { agentWith } = bed;

describe('a failing model', () => {
  it('429 with retry-after is retried after the delay (time-skipped) with the same idempotency key', async () => {
    const agent = await agentWith([
      { error: { status: 429, headers: { 'retry-after': '120' }, times: 2 } },
      { content: 'Made it.' },
    ]);
    const result = await agent.ask('Hello');
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Made it.', rounds: 1 });
    const keys = agent.model.requests.map((request) => request.idempotencyKey);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it('500 then success: the retry answers the turn', async () => {
    const agent = await agentWith([{ error: { status: 500 } }, { content: 'Recovered.' }]);
    const result = await agent.ask('Hello');
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Recovered.' });
    expect(agent.model.requests.map((request) => request.status)).toEqual([500, 200]);
  });

  it('400 ends the turn with error:ModelBadRequest after one attempt, without failing the conversation', async () => {
    const agent = await agentWith([{ error: { status: 400 } }]);
    const result = await agent.ask('Hello');
    expect(result).toMatchObject({ stopReason: `error:${FailureType.ModelBadRequest}`, answer: null, rounds: 0 });
    expect(result.error?.message).toMatch(/HTTP 400/);
    expect(agent.model.requests).toHaveLength(1);
  });

  it('model errors end the turn after modelAttempts attempts (default 5), not after the attempts lost workers get', async () => {
    // The activity counts its failed attempts and fails the last one for good; Temporal would allow 10 more.
    const five = await agentWith([{ error: { status: 500, times: 5 } }, { content: 'Too late.' }]);
    const result = await five.ask('Hello');
    expect(result).toMatchObject({ stopReason: `error:${FailureType.ModelServerError}`, answer: null, rounds: 0 });
    expect(result.error?.message).toMatch(/HTTP 500/);
    expect(five.model.requests.map((request) => request.status)).toEqual([500, 500, 500, 500, 500]);

    const two = await agentWith([{ error: { status: 503, times: 2 } }, { content: 'Too late.' }]);
    const own = await two.ask('Hello', { settings: { modelAttempts: 2 } });
    expect(own.stopReason).toBe(`error:${FailureType.ModelServerError}`);
    expect(two.model.requests).toHaveLength(2);
  });

  it('401 ends the turn with error:ModelAuthentication and says to check the API key', async () => {
    const agent = await agentWith([{ error: { status: 401 } }]);
    const result = await agent.ask('Hello');
    expect(result.stopReason).toBe(`error:${FailureType.ModelAuthentication}`);
    expect(result.error?.message).toContain('OPENAI_API_KEY');
    expect(agent.model.requests).toHaveLength(1);
  });
});

describe('a failing tool', () => {
  it('a server that goes away after listing its tools gives the model a "tool unavailable" result', async () => {
    const served = await serveMcpOverHttp(() => {
      const server = new McpServer({ name: 'ephemeral', version: '1.0.0' });
      server.registerTool('lookup', { description: 'Look something up.', annotations: { readOnlyHint: true } }, () => ({
        content: [{ type: 'text', text: 'found' }],
      }));
      return server;
    });
    bed.onCleanup(() => served.close());
    const agent = await agentWith(
      [
        async () => {
          await served.close(); // the server dies between listing the tools and the call
          return { toolCalls: [{ name: 'ephemeral__lookup', arguments: {} }] };
        },
        { content: 'The lookup service is down.' },
      ],
      { mcpServers: [{ ...bed.crm.config('ephemeral'), url: served.url }] },
    );
    const result = await agent.ask('Look it up');
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'The lookup service is down.', toolCalls: 1 });
    const [entry] = toolResults(agent.model.requests[1]!.messages);
    expect(entry?.content).toMatch(/^Error: the tool ephemeral__lookup is unavailable right now/);
  });

  it('a tool with side effects whose server is gone is "unavailable": its last failure proves nothing was sent', async () => {
    let ran = 0;
    const served = await serveMcpOverHttp(() => {
      const server = new McpServer({ name: 'ephemeral', version: '1.0.0' });
      server.registerTool('charge', { description: 'Charge a card.', annotations: { destructiveHint: true } }, () => {
        ran++;
        return { content: [{ type: 'text', text: 'charged' }] };
      });
      return server;
    });
    bed.onCleanup(() => served.close());
    const agent = await agentWith(
      [
        async () => {
          await served.close(); // gone before the call: every attempt is refused before anything is sent
          return { toolCalls: [{ name: 'ephemeral__charge', arguments: {} }] };
        },
        { content: 'The payment service is down.' },
      ],
      { mcpServers: [{ ...bed.crm.config('ephemeral'), url: served.url }] },
    );
    const result = await agent.ask('Charge it', { settings: { toolAttempts: 2 } });
    expect(result).toMatchObject({ stopReason: 'completed', toolCalls: 1 });
    const [entry] = toolResults(agent.model.requests[1]!.messages);
    expect(entry?.content).toMatch(/^Error: the tool ephemeral__charge is unavailable right now/);
    expect(ran).toBe(0);
  });

  it('a read-only tool that fails on every attempt is "unavailable" after exactly toolAttempts runs', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'durable-agent-tool-attempts-'));
    bed.onCleanup(async () => rmSync(directory, { recursive: true, force: true }));
    const counterFile = path.join(directory, 'events.jsonl');
    const agent = await agentWith(
      [{ toolCalls: [{ name: 'test__slow', arguments: { delayMs: 5_000 } }] }, { content: 'It is down.' }],
      { mcpServers: [testServerStdio('test', counterFile, { timeoutMs: 300 })] },
    );
    const result = await agent.ask('Run slow', { settings: { toolAttempts: 2 } });
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'It is down.', toolCalls: 1 });
    const [entry] = toolResults(agent.model.requests[1]!.messages);
    expect(entry?.content).toMatch(/^Error: the tool test__slow is unavailable right now \(.*no answer within 300 ms/);
    expect(countTestServerEvents(counterFile).calls.slow).toBe(2);
  });

  it('a timed-out call to a tool that is not idempotent is not retried: the model hears the outcome is unknown', async () => {
    const before = bed.crm.calls.hang ?? 0;
    const agent = await agentWith(
      [{ toolCalls: [{ name: 'slowcrm__hang', arguments: {} }] }, { content: 'I will check before retrying.' }],
      { mcpServers: [bed.crm.config('slowcrm', { timeoutMs: 1_000 })] },
    );
    const result = await agent.ask('Do the risky thing');
    expect(result).toMatchObject({ stopReason: 'completed', toolCalls: 1 });
    expect((bed.crm.calls.hang ?? 0) - before).toBe(1);
    const [entry] = toolResults(agent.model.requests[1]!.messages);
    expect(entry?.content).toMatch(/may or may not/i);
  });

  it('a tool with side effects whose first attempt never sent its request is retried, and runs once', async () => {
    // The test server over stdio, except that its second process exits at once: the `crash` call ends the first
    // process, so the pool's restart for `increment` fails before anything is sent. The activity's first attempt
    // records `not_sent` as it fails; the second attempt (a third process) may then call the tool.
    const directory = mkdtempSync(path.join(tmpdir(), 'durable-agent-not-sent-'));
    bed.onCleanup(async () => rmSync(directory, { recursive: true, force: true }));
    const counterFile = path.join(directory, 'events.jsonl');
    const starts = path.join(directory, 'starts');
    const entry = testServerEntry();
    const failSecondStart = [
      "const fs = require('node:fs');",
      `const file = ${JSON.stringify(starts)};`,
      "const n = (fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0) + 1;",
      'fs.writeFileSync(file, String(n));',
      'if (n === 2) process.exit(2);',
      `process.argv = [process.execPath, ${JSON.stringify(entry)}];`,
      `import(${JSON.stringify(path.toNamespacedPath(entry))});`,
    ].join('\n');
    const agent = await agentWith(
      [
        { toolCalls: [{ name: 'flaky__crash', arguments: {} }] },
        { toolCalls: [{ name: 'flaky__increment', arguments: {} }] },
        { content: 'Incremented once.' },
      ],
      {
        mcpServers: [
          stdioServer('flaky', process.execPath, ['-e', failSecondStart], {
            env: { MCP_TEST_COUNTER_FILE: counterFile },
          }),
        ],
      },
    );
    const result = await agent.ask('Crash, then increment');
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Incremented once.', toolCalls: 2 });
    const [crashed] = toolResults(agent.model.requests[1]!.messages);
    expect(crashed?.content).toMatch(/may or may not have taken effect/);
    const incremented = toolResults(agent.model.requests[2]!.messages).at(-1);
    expect(incremented?.content).toBe('default = 1');
    const counts = countTestServerEvents(counterFile);
    expect(counts.calls).toEqual({ crash: 1, increment: 1 });
    expect(counts.processes).toBe(2); // the second start exited before the server started
  });
});
