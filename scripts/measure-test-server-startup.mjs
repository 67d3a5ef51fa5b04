#!/usr/bin/env node
// Measures how long the time-skipping test server takes until its gRPC port accepts connections, the moment
// @temporalio/testing waits for (about 5 s, 50 polls of 100 ms, not configurable). One process keeps another core
// busy the whole time, as a parallel test file or build would.
//
// Usage: npm run build && node scripts/measure-test-server-startup.mjs [runs=10] [busy-processes=1]
// Uses TEMPORAL_TEST_SERVER_PATH or the provisioned server (provisioning it first if needed).
import { spawn } from 'node:child_process';
import { loadConfig } from '../dist/config/index.js';
import { ensureTestServer, findFreePort, isPortOpen } from '../dist/temporal-servers/index.js';

const runs = Number(process.argv[2] ?? 10);
const busyProcesses = Number(process.argv[3] ?? 1);
const launcher = await ensureTestServer(loadConfig());

// A busy loop in its own process occupies one core, like `yes > /dev/null`.
const busy = Array.from({ length: busyProcesses }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);

async function startOnce() {
  const port = await findFreePort();
  const startedAt = process.hrtime.bigint();
  const server = spawn(launcher, [String(port), '--enable-time-skipping'], { stdio: 'ignore' });
  let exited = false;
  server.on('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`the test server exited before answering on port ${port}`);
      if (await isPortOpen(port, '127.0.0.1', 200)) return Number(process.hrtime.bigint() - startedAt) / 1e6;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    server.kill('SIGKILL');
    await new Promise((resolve) => (exited ? resolve() : server.once('exit', resolve)));
  }
}

const timesMs = [];
try {
  for (let run = 1; run <= runs; run++) {
    const ms = await startOnce();
    timesMs.push(ms);
    console.log(`run ${run}: ${(ms / 1000).toFixed(2)} s`);
  }
} finally {
  for (const process of busy) process.kill('SIGKILL');
}
const sorted = [...timesMs].sort((a, b) => a - b);
const format = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(
  `launcher: ${launcher}\nruns: ${runs}, busy processes: ${busyProcesses}\n` +
    `best ${format(sorted[0])}, median ${format(sorted[Math.floor(sorted.length / 2)])}, worst ${format(sorted.at(-1))}`,
);
