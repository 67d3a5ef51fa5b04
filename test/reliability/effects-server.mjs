#!/usr/bin/env node
// A stdio MCP server with one tool for the Temporal-outage runs: `slow_increment`, a side effect that must not run
// twice (no readOnly/idempotent annotation) and takes `delayMs`, so the Temporal server can be killed while it runs.
// Like dist/testing/mcp-test-server.js it appends a `call` line to MCP_TEST_COUNTER_FILE as the call starts (so
// helpers.ts's callsPerTool counts it), and a `finished` line as it answers.
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const counterFile = process.env.MCP_TEST_COUNTER_FILE;
const record = (event, tool) => {
  if (counterFile) appendFileSync(counterFile, `${JSON.stringify({ event, tool, pid: process.pid })}\n`);
};

const counters = new Map();
// One connection per process; the factory also serves a client that speaks 2026-07-28 (no session).
const createServer = () => {
  const server = new McpServer({ name: 'durable-agent-effects', version: '1.0.0' });
  server.registerTool(
    'slow_increment',
    {
      description: 'Waits delayMs, then adds one to a counter and returns it: a side effect that must not run twice.',
      inputSchema: z.object({ key: z.string(), delayMs: z.number().int().min(0) }),
    },
    async ({ key, delayMs }) => {
      record('call', 'slow_increment');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const value = (counters.get(key) ?? 0) + 1;
      counters.set(key, value);
      record('finished', 'slow_increment');
      return { content: [{ type: 'text', text: `${key} = ${value}` }] };
    },
  );
  return server;
};
record('start');
serveStdio(createServer);
process.stdin.once('end', () => process.exit(0));
