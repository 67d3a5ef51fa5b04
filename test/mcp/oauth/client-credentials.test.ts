import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMcpConfig, type HttpServerConfig } from '../../../src/worker/mcp/config.js';
import { McpTransportError } from '../../../src/worker/mcp/errors.js';
import { MemoryTokenStore } from '../../../src/worker/mcp/oauth/token-store.js';
import { startTestAgent } from '../../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../../src/testing/environment.js';
import type { ConversationOutcome } from '../../../src/workflows/definitions.js';
import { allText, historiesOfEveryRun, occurrences } from '../../helpers/secrets.js';
import { toolResults } from '../../helpers/transcript.js';
import { MACHINE_CLIENT, startProtectedMcp, type ProtectedMcp } from '../../helpers/protected-mcp-server.js';
import { mcpTool, usePools } from '../helpers.js';

/**
 * Client credentials (issue 19, item 3): the worker authorizes itself to an MCP server that requires OAuth tokens
 * from a real authorization server (oidc-provider), through the MCP SDK; a real turn calls a tool with the token, and
 * no token or client secret reaches workflow history. Step-up on 403 insufficient_scope, and a refused client.
 */

let env: TestWorkflowEnvironment;
const cleanups: Array<() => Promise<unknown>> = [];
const pool = usePools();

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(cleanups.reverse().map((cleanup) => cleanup()));
  await env?.teardown();
});

async function protectedServer(options: { machineClientSecret?: string } = {}): Promise<ProtectedMcp> {
  const server = await startProtectedMcp(options);
  cleanups.push(() => server.close());
  return server;
}

/** An `mcpServers` file with `crm` (client credentials, secret from the environment) and `people` (a person's login). */
function config(crm: ProtectedMcp, people: ProtectedMcp | undefined, secret = MACHINE_CLIENT.clientSecret) {
  return parseMcpConfig(
    JSON.stringify({
      mcpServers: {
        crm: {
          url: crm.mcp.url,
          oauth: { grant: 'client_credentials', clientId: MACHINE_CLIENT.clientId, clientSecret: '${CRM_SECRET}' },
        },
        ...(people && { people: { url: people.mcp.url, oauth: { grant: 'authorization_code' } } }),
      },
    }),
    'mcp.json',
    { CRM_SECRET: secret },
  );
}

describe('client credentials', () => {
  it('authorize the tool calls of a real turn, and neither token nor secret reaches history', async () => {
    const crm = await protectedServer();
    const people = await protectedServer();
    const agent = await startTestAgent({
      env,
      mcpServers: config(crm, people),
      mcpOptions: { tokenStore: new MemoryTokenStore(), logger: { warn: () => undefined, debug: () => undefined } },
      script: [
        { toolCalls: [{ name: 'crm__echo', arguments: { text: 'authorized hello' } }] },
        { content: 'The CRM answered.' },
      ],
    });
    cleanups.push(() => agent.close());

    const conversationId = randomUUID();
    const handle = await agent.startConversation(conversationId, {
      messages: [{ id: randomUUID(), content: 'Say hello through the CRM' }],
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;
    const result = outcome.state.lastResult!;
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'The CRM answered.' });
    expect(toolResults(agent.model.requests[1]!.messages)[0]?.content).toContain('authorized hello');
    expect(crm.mcp.counters.calls.echo).toBe(1);
    // The token came from the authorization server's client-credentials grant, and the server accepted it.
    expect(crm.authorizationServer.grants).toEqual({ client_credentials: 1 });
    expect(crm.acceptedTokens).toHaveLength(1);

    // The server needing a person's login is left out of the turn, with the named error telling how to fix it.
    expect(result.unavailableServers).toEqual([
      {
        server: 'people',
        reason: expect.stringMatching(/needs a person to authorize it: .*Run `durable-agent mcp login people`/),
      },
    ]);

    // Every event of the run, payloads decoded: no token, no client secret.
    const histories = await historiesOfEveryRun(env.client, handle.workflowId, handle.firstExecutionRunId);
    const text = allText(histories);
    expect(text).toContain('authorized hello');
    for (const secret of [...crm.acceptedTokens, MACHINE_CLIENT.clientSecret]) {
      expect(occurrences(text, secret)).toEqual([]);
    }
  });
});

describe('a token echoed by a failing server', () => {
  it('is redacted from the tool error the model sees and from history', async () => {
    const crm = await protectedServer();
    const agent = await startTestAgent({
      env,
      mcpServers: config(crm, undefined),
      mcpOptions: { tokenStore: new MemoryTokenStore(), logger: { warn: () => undefined, debug: () => undefined } },
      script: [
        () => {
          crm.failEchoingToken(); // after the listing: the call's POST is answered 500 quoting the token
          return { toolCalls: [{ name: 'crm__echo', arguments: { text: 'hello' } }] };
        },
        { content: 'The CRM is failing.' },
      ],
    });
    cleanups.push(() => agent.close());
    const handle = await agent.startConversation(randomUUID(), {
      messages: [{ id: randomUUID(), content: 'Say hello through the CRM' }],
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;
    expect(outcome.state.lastResult).toMatchObject({ answer: 'The CRM is failing.' });
    const [token] = crm.acceptedTokens;
    const toolError = toolResults(agent.model.requests[1]!.messages)[0]?.content;
    expect(toolError).toContain('upstream failed for credential [oauth access token of MCP server crm]');
    const text = allText(await historiesOfEveryRun(env.client, handle.workflowId, handle.firstExecutionRunId));
    expect(text).toContain('[oauth access token of MCP server crm]');
    expect(occurrences(text, token!)).toEqual([]);
  });
});

describe('a client-credentials server', () => {
  it('steps up to the scope the server asks for on 403 insufficient_scope', async () => {
    const crm = await protectedServer();
    const mcp = pool(config(crm, undefined).servers, { tokenStore: new MemoryTokenStore() });
    expect((await mcp.callTool(mcpTool('crm', 'echo'), { text: 'one' })).content).toEqual([
      { type: 'text', text: 'one' },
    ]);

    crm.requireScopes(['mcp:tools', 'mcp:admin']);
    expect((await mcp.callTool(mcpTool('crm', 'echo'), { text: 'two' })).content).toEqual([
      { type: 'text', text: 'two' },
    ]);
    expect(crm.rejections.insufficientScope).toBe(1);
    expect(crm.authorizationServer.grants).toEqual({ client_credentials: 2 });
    expect(crm.acceptedTokens).toHaveLength(2);
    const [, second] = crm.acceptedTokens;
    const scopes = JSON.parse(Buffer.from(second!.split('.')[1]!, 'base64url').toString()) as { scope: string };
    expect(scopes.scope.split(' ').sort()).toEqual(['mcp:admin', 'mcp:tools']);
    // Each token the worker obtained is redacted from everything the worker sends.
    for (const token of crm.acceptedTokens) {
      expect(mcp.secrets.text(`Bearer ${token}`)).toBe('Bearer [oauth access token of MCP server crm]');
    }
  });

  it('whose client the authorization server refuses fails for good, naming the oauth config, without the secret', async () => {
    const crm = await protectedServer();
    const wrongSecret = `wrong-${randomUUID()}`;
    const servers = config(crm, undefined, wrongSecret).servers as HttpServerConfig[];
    const mcp = pool(servers, { tokenStore: new MemoryTokenStore() });

    const listing = await mcp.listTools();
    expect(listing.unavailable).toEqual([
      {
        server: 'crm',
        reason: expect.stringMatching(/refused to issue a token \(invalid_client: .*check "oauth" in the MCP config/),
      },
    ]);
    const call = mcp.callTool(mcpTool('crm', 'echo'), { text: 'hello' });
    await expect(call).rejects.toBeInstanceOf(McpTransportError);
    await expect(call).rejects.toMatchObject({ retryable: false, requestSent: false });
    const error = await call.catch((caught: unknown) => caught);
    expect(occurrences(allText([listing, error]), wrongSecret)).toEqual([]);
    expect(crm.mcp.counters.calls.echo).toBeUndefined();
  });
});
