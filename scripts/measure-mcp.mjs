#!/usr/bin/env node
// Cost of a tool call through the MCP pool: the first call (cold: start or connect, initialize, list tools, call)
// and later calls on the open connection (warm), over stdio and Streamable HTTP; and the cost of a turn's listing on
// an open connection (every turn lists each server again: one tools/list round trip).
// Run after a build:  npx tsc -p tsconfig.build.json && node scripts/measure-mcp.mjs [--cold N] [--warm N]
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createToolActivities } from '../dist/worker/activities/tool-calls/call.js';
import { McpPool } from '../dist/worker/mcp/pool.js';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const COLD_RUNS = argument('--cold', 10);
const WARM_CALLS = argument('--warm', 300);

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
const testServer = path.join(root, 'dist/testing/mcp-test-server.js');
const everything = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

const common = { allowTools: undefined, denyTools: [], timeoutMs: 60_000, disabled: false };
const stdio = (name, args) => ({
  ...common,
  name,
  transport: 'stdio',
  command: process.execPath,
  args,
  env: {},
  cwd: undefined,
});
const http = (name, url) => ({ ...common, name, transport: 'http', url, headers: {} });
const quiet = { onServerStderr: () => undefined, logger: { warn: () => undefined, debug: () => undefined } };

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
  return { median: at(0.5), p95: at(0.95), min: sorted[0], n: sorted.length };
}

async function measure(label, server, tool, args) {
  const target = { server: server.name, originalName: tool };
  const cold = [];
  for (let run = 0; run < COLD_RUNS; run += 1) {
    const pool = new McpPool([server], quiet);
    const started = performance.now();
    await pool.callTool(target, args);
    cold.push(performance.now() - started);
    await pool.close();
  }
  const pool = new McpPool([server], quiet);
  await pool.callTool(target, args);
  for (let call = 0; call < 20; call += 1) await pool.callTool(target, args); // let the JIT settle
  const warm = [];
  for (let call = 0; call < WARM_CALLS; call += 1) {
    const started = performance.now();
    await pool.callTool(target, args);
    warm.push(performance.now() - started);
  }
  // The same warm call through the tool activity (real activity context: heartbeat timer, conversion).
  const activities = createToolActivities({ pool });
  const [definition] = (await pool.listTools()).tools.filter((candidate) => candidate.originalName === tool);
  const input = { toolCallId: 'measure', tool: definition, arguments: args };
  const environment = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  const activity = [];
  for (let call = 0; call < WARM_CALLS; call += 1) {
    const started = performance.now();
    await environment.run(activities.callTool, input);
    activity.push(performance.now() - started);
  }
  // What each turn's first model call spends listing this server's tools again on the open connection.
  const listing = [];
  for (let turn = 0; turn < WARM_CALLS; turn += 1) {
    const started = performance.now();
    await pool.listTools();
    listing.push(performance.now() - started);
  }
  const tools = (await pool.listTools()).tools.length;
  await pool.close();
  return {
    label,
    tools,
    cold: summary(cold),
    warm: summary(warm),
    activity: summary(activity),
    listing: summary(listing),
  };
}

async function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startHttp(command, args, env, url) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: 'ignore' });
  for (let tries = 0; tries < 200; tries += 1) {
    try {
      await fetch(url).then((response) => response.body?.cancel());
      return child;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${url} did not come up`);
}

const results = [];
const children = [];
try {
  results.push(await measure('test server, stdio', stdio('test', [testServer]), 'echo', { text: 'hi' }));
  results.push(
    await measure('server-everything, stdio', stdio('everything', [everything, 'stdio']), 'echo', { message: 'hi' }),
  );

  const testPort = await freePort();
  const testUrl = `http://127.0.0.1:${testPort}/mcp`;
  children.push(await startHttp(process.execPath, [testServer, '--http', '--port', String(testPort)], {}, testUrl));
  results.push(await measure('test server, Streamable HTTP', http('test', testUrl), 'echo', { text: 'hi' }));

  const everythingPort = await freePort();
  const everythingUrl = `http://127.0.0.1:${everythingPort}/mcp`;
  children.push(
    await startHttp(process.execPath, [everything, 'streamableHttp'], { PORT: String(everythingPort) }, everythingUrl),
  );
  results.push(
    await measure('server-everything, Streamable HTTP', http('everything', everythingUrl), 'echo', { message: 'hi' }),
  );
} finally {
  for (const child of children) child.kill('SIGKILL');
}

const format = ({ median, p95 }) => `${median.toFixed(2)} / ${p95.toFixed(2)}`;
console.log(
  `Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${os.platform()}`,
);
console.log(`cold runs: ${COLD_RUNS}, warm calls: ${WARM_CALLS}; times in ms, median / p95\n`);
console.log(
  '| server, transport | first call (cold) | warm call, pool | warm call, activity | listing per turn (tools) |',
);
console.log('|---|---|---|---|---|');
for (const result of results) {
  console.log(
    `| ${result.label} | ${format(result.cold)} | ${format(result.warm)} | ${format(result.activity)} | ` +
      `${format(result.listing)} (${result.tools}) |`,
  );
}
