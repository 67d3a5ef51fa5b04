#!/usr/bin/env node
// A stdio MCP server that gives away everything it was given, for the redaction test (what-leaves-the-worker.test.ts):
// `environment` answers with its environment and arguments, `progress` reports them in a progress notification, and
// `crash` prints them to stderr and exits in the middle of the call.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const everything = () => JSON.stringify({ argv: process.argv.slice(2), env: process.env });

// Served to clients of either era (2026-07-28 or a 2025-11-25 session); one connection per process.
const createServer = () => {
  const server = new McpServer({ name: 'durable-agent-leaky', version: '1.0.0' });
  server.registerTool(
    'environment',
    { description: 'Answers with its environment.', inputSchema: z.object({}), annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: `my environment: ${everything()}` }] }),
  );
  server.registerTool(
    'progress',
    {
      description: 'Reports its environment as progress, then answers.',
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true },
    },
    async (_arguments, context) => {
      const progressToken = context.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        await context.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress: 1, total: 2, message: `working with ${everything()}` },
        });
      }
      // Long enough for the tool activity's heartbeat to record the progress.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { content: [{ type: 'text', text: 'done' }] };
    },
  );
  server.registerTool(
    'crash',
    { description: 'Prints its environment and exits.', inputSchema: z.object({}) },
    async () => {
      console.error(`crashing with ${everything()}`);
      process.exit(1);
    },
  );
  return server;
};
serveStdio(createServer);
process.stdin.once('end', () => process.exit(0));
