#!/usr/bin/env node
// A stdio MCP server that gives away everything it was given, for the redaction test (what-leaves-the-worker.test.ts):
// `environment` answers with its environment and arguments, `progress` reports them in a progress notification, and
// `crash` prints them to stderr and exits in the middle of the call.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const everything = () => JSON.stringify({ argv: process.argv.slice(2), env: process.env });

const server = new McpServer({ name: 'durable-agent-leaky', version: '1.0.0' });
server.registerTool(
  'environment',
  { description: 'Answers with its environment.', inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: 'text', text: `my environment: ${everything()}` }] }),
);
server.registerTool(
  'progress',
  {
    description: 'Reports its environment as progress, then answers.',
    inputSchema: {},
    annotations: { readOnlyHint: true },
  },
  async (_arguments, extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: 1, total: 2, message: `working with ${everything()}` },
      });
    }
    // Long enough for the tool activity's heartbeat to record the progress.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return { content: [{ type: 'text', text: 'done' }] };
  },
);
server.registerTool('crash', { description: 'Prints its environment and exits.', inputSchema: {} }, async () => {
  console.error(`crashing with ${everything()}`);
  process.exit(1);
});
await server.connect(new StdioServerTransport());
process.stdin.once('end', () => process.exit(0));
