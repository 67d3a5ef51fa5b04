import { McpServer, type Tool } from '@modelcontextprotocol/server';
import type { FunctionDefinition } from 'openai/resources/shared';
import { describe, expect, it } from 'vitest';
import { DESCRIPTION_TRUNCATION_MARKER } from '../../src/worker/activities/model/tool-limits.js';
import { FailureType } from '../../src/shared/errors.js';
import type { JsonValue } from '../../src/shared/types.js';
import { serveMcpOverHttp } from '../../src/testing/mcp-http.js';
import type { RecordedRequest } from '../../src/testing/scripted-model/recorded-request.js';
import { conversationWorkflowId, modelContextQuery } from '../../src/workflows/definitions.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { toolResults } from '../helpers/transcript.js';

const bed = useTimeSkippingWithCrm();

/**
 * A description the length of the one `@modelcontextprotocol/server-sequential-thinking` publishes (2,781
 * characters), which OpenAI refuses: its limit is 1,024.
 */
const LONG_DESCRIPTION = (() => {
  const line = 'Each thought can build on, question, or revise previous insights as understanding deepens.\n';
  return line.repeat(Math.ceil(2_781 / line.length)).slice(0, 2_781);
})();

/** The tools of the "thinking" server, as it lists them: raw JSON Schemas, the way servers in the wild write them. */
const THINKING_TOOLS: Tool[] = [
  {
    name: 'record_steps',
    description: 'Record the steps of a plan.',
    inputSchema: {
      type: 'object',
      properties: {
        steps: { type: 'array', description: 'The steps, in order.' },
        meta: { type: 'object', properties: { tags: { type: ['array', 'null'] } } },
      },
      required: ['steps'],
    },
  },
  {
    name: 'sequentialthinking',
    description: LONG_DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        thought: { type: 'string' },
        nextThoughtNeeded: { type: 'boolean' },
        thoughtNumber: { type: 'integer', minimum: 1 },
        totalThoughts: { type: 'integer', minimum: 1 },
      },
      required: ['thought', 'nextThoughtNeeded', 'thoughtNumber', 'totalThoughts'],
    },
  },
];

/** Serve the "thinking" tools over Streamable HTTP; a call answers with the arguments it got. */
async function startThinkingServer() {
  const served = await serveMcpOverHttp(() => {
    const server = new McpServer({ name: 'thinking', version: '1.0.0' }, { capabilities: { tools: {} } });
    // The low-level handlers, so the schemas reach the client exactly as written (McpServer would derive them).
    server.server.setRequestHandler('tools/list', () => ({ tools: THINKING_TOOLS }));
    server.server.setRequestHandler('tools/call', (request) => ({
      content: [{ type: 'text', text: `${request.params.name}: ${JSON.stringify(request.params.arguments)}` }],
    }));
    return server;
  });
  bed.onCleanup(() => served.close());
  return { ...bed.crm.config('thinking'), url: served.url };
}

/** The function definitions a request offered, in order. */
function offeredFunctions(request: RecordedRequest | undefined): FunctionDefinition[] {
  return (request?.tools ?? []).flatMap((tool) => (tool.type === 'function' ? [tool.function] : []));
}

/** Every array schema in `schema` that has no `items`, by path. */
function arraysWithoutItems(schema: unknown, path = ''): string[] {
  if (Array.isArray(schema)) return schema.flatMap((member, index) => arraysWithoutItems(member, `${path}/${index}`));
  if (schema === null || typeof schema !== 'object') return [];
  const { type } = schema as { type?: JsonValue };
  const isArray = type === 'array' || (Array.isArray(type) && type.includes('array'));
  return [
    ...(isArray && !('items' in schema) ? [path] : []),
    ...Object.entries(schema).flatMap(([key, value]) => arraysWithoutItems(value, `${path}/${key}`)),
  ];
}

describe('tools the provider would refuse', () => {
  it("are offered within the Chat Completions limits, and still run with their servers' own schemas", async () => {
    const thinking = await startThinkingServer();
    const agent = await bed.agentWith(
      [
        {
          toolCalls: [
            {
              name: 'thinking__sequentialthinking',
              arguments: { thought: 'First.', nextThoughtNeeded: false, thoughtNumber: 1, totalThoughts: 1 },
            },
            { name: 'thinking__record_steps', arguments: { steps: ['look', 'leap'] } },
          ],
        },
        { content: 'Thought it through.' },
      ],
      { mcpServers: [bed.crm.config(), thinking] },
    );
    const conversationId = 'tool-limits-offered';
    const result = await agent.ask('Think it through.', { conversationId });
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Thought it through.', toolCalls: 2 });

    const [first, second] = agent.model.requests;
    const offered = offeredFunctions(first);
    expect(offered.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['crm__find_user', 'thinking__record_steps', 'thinking__sequentialthinking']),
    );
    for (const tool of offered) {
      expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(tool.description?.length ?? 0).toBeLessThanOrEqual(1_024);
      expect(tool.parameters).toMatchObject({ type: 'object', properties: expect.any(Object) });
      expect(arraysWithoutItems(tool.parameters)).toEqual([]);
    }
    const sequential = offered.find((tool) => tool.name === 'thinking__sequentialthinking')!;
    expect(sequential.description?.endsWith(DESCRIPTION_TRUNCATION_MARKER)).toBe(true);
    expect(LONG_DESCRIPTION.startsWith(sequential.description!.slice(0, 900))).toBe(true);
    expect(offeredFunctions(second)).toEqual(offered);

    // The calls reached the server as the model made them, and the turn recorded the servers' own definitions.
    expect(toolResults(second!.messages).map((message) => message.content)).toEqual([
      'sequentialthinking: {"thought":"First.","nextThoughtNeeded":false,"thoughtNumber":1,"totalThoughts":1}',
      'record_steps: {"steps":["look","leap"]}',
    ]);
    const context = await agent.env.client.workflow
      .getHandle(conversationWorkflowId(conversationId))
      .query(modelContextQuery, { from: 0, limit: 0 });
    const recorded = context.tools?.find((tool) => tool.name === 'thinking__sequentialthinking');
    expect(recorded?.description).toBe(LONG_DESCRIPTION);
    expect(context.tools?.find((tool) => tool.name === 'thinking__record_steps')?.inputSchema).toEqual(
      THINKING_TOOLS[0]!.inputSchema,
    );
  });

  it('a 400 that names only tools[1] ends the turn with an error naming that server__tool and its server', async () => {
    const thinking = await startThinkingServer();
    const message =
      "Invalid 'tools[1].function.description': string too long. Expected a string with maximum length 1024, " +
      'but got a string with length 2781 instead.';
    const agent = await bed.agentWith(
      [
        {
          error: {
            status: 400,
            body: {
              error: {
                message,
                type: 'invalid_request_error',
                param: 'tools[1].function.description',
                code: 'string_above_max_length',
              },
            },
          },
        },
      ],
      { mcpServers: [thinking] },
    );
    const result = await agent.ask('Think it through.');
    expect(offeredFunctions(agent.model.requests[0]).map((tool) => tool.name)).toEqual([
      'thinking__record_steps',
      'thinking__sequentialthinking',
    ]);
    expect(result).toMatchObject({ stopReason: `error:${FailureType.ModelBadRequest}`, answer: null });
    expect(result.error?.message).toContain(message);
    expect(result.error?.message).toContain(
      'tools[1] is thinking__sequentialthinking, the tool "sequentialthinking" of the MCP server "thinking"',
    );
    expect(agent.model.requests).toHaveLength(1);
  });
});
