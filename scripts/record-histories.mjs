#!/usr/bin/env node
// Records the replay corpus of a release: conversations run by the real worker (built into dist/) on a Temporal dev
// server, with the scripted model and our MCP test server over stdio, each in one of the states a conversation can be
// in when a new worker is deployed. Every run's history goes to test/fixtures/releases/<version>/<scenario>.json
// (several runs: <scenario>.run-<n>.json) in the JSON of `temporal workflow show --output json`, and
// test/fixtures/releases/<version>/manifest.json says of each file what it is. test/replay/releases.test.ts replays
// every release's corpus against the workflow code as it is now.
//
//   npm run record-histories -- --release 0.2.0                  # build, then record every scenario
//   npm run record-histories -- --release 0.2.0 approval-denied   # or only some
//
// A corpus is recorded once per release and never re-recorded: a released history is what workers in production
// wrote, and a change must keep replaying it (`patched()`, docs/reliability.md "Replay"). A change that needs a new
// history adds it under the next version (`--release <next>`, not yet in releases.json). The script refuses to write
// a file that exists into the directory of a version releases.json lists, and records into such a directory only with
// that release's workflow code (src/workflows and src/shared as in its commit).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { DurableAgentClient } from '../dist/client/index.js';
import { encryptionDataConverter } from '../dist/codec/data-converter.js';
import { createLocalEnvironment } from '../dist/testing/environment.js';
import { startScriptedModel } from '../dist/testing/scripted-model/index.js';
import { startTestAgent } from '../dist/testing/agent.js';
import { conversationWorkflowId } from '../dist/workflows/definitions.js';
import { lifecycleScenarios } from './history-scenarios/lifecycle.mjs';
import { midFlightScenarios } from './history-scenarios/mid-flight.mjs';
import { peopleScenarios } from './history-scenarios/people.mjs';
import { scheduleScenarios } from './history-scenarios/schedules.mjs';
import { recordedOnceScenarios } from './history-scenarios/recorded-once.mjs';
import { turnScenarios } from './history-scenarios/turns.mjs';
import { compactionScenarios } from './history-scenarios/compaction.mjs';
import { taskScenarios } from './history-scenarios/tasks.mjs';
import { startTaskMcpServer } from '../dist/testing/mcp-task-server.js';
import { tenantScenarios } from './history-scenarios/tenants.mjs';
import { budgetPauseScenarios } from './history-scenarios/budget-pauses.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const releasesDirectory = path.join(root, 'test/fixtures/releases');

/**
 * Each scenario: `description`, the model's `script` for its conversation, `encrypted` (payloads encrypted with the
 * fixture key), and `run(context)`, which drives the conversation and returns once nothing of it runs any more, having
 * called `context.record(...firstRunIds)` (whole runs, state `finished`) or `context.capture(state, ready)` (the
 * latest run's history as it is once `ready(history)` holds).
 */
const scenarios = {
  ...turnScenarios,
  ...peopleScenarios,
  ...lifecycleScenarios,
  ...midFlightScenarios,
  ...scheduleScenarios,
  ...compactionScenarios,
  ...taskScenarios,
  ...tenantScenarios,
  ...budgetPauseScenarios,
  ...recordedOnceScenarios,
};

/**
 * The key of the encrypted histories: the one of test/codec/fixture-key.ts (a TypeScript module this script cannot
 * import), derived from the same phrase. The replay test decrypts the corpus with that module's key, so a difference
 * fails there.
 */
const FIXTURE_KEY = {
  id: 'fixture-2026',
  key: createHash('sha256').update('durable-agent encrypted history fixture key').digest(),
};

/**
 * An MCP config entry of our test server over stdio, built into dist/ (echo, set_value, slow, hang, ask_user, ...),
 * legacy-only: its questions are pushed in a 2025-11-25 session, as in the histories recorded so far.
 */
const testServer = {
  name: 'test',
  transport: 'stdio',
  command: process.execPath,
  args: [path.join(root, 'dist/testing/mcp-test-server.js'), '--legacy-only'],
  env: {},
  cwd: undefined,
  allowTools: undefined,
  denyTools: [],
  timeoutMs: 60_000,
  disabled: false,
};

const usage = 'usage: npm run record-histories -- --release <version> [scenario ...]';

function parseArguments(argv) {
  const names = [];
  let version;
  for (let index = 0; index < argv.length; index++) {
    if (argv[index] === '--release') version = argv[++index];
    else if (argv[index].startsWith('--release=')) version = argv[index].slice('--release='.length);
    else names.push(argv[index]);
  }
  if (version === undefined) throw new Error(`say which release the histories belong to.\n${usage}`);
  if (!/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(version)) {
    throw new Error(`--release ${JSON.stringify(version)} is not a version (e.g. 0.2.0).\n${usage}`);
  }
  for (const name of names) {
    if (!(name in scenarios))
      throw new Error(`unknown scenario ${name}; scenarios: ${Object.keys(scenarios).join(', ')}`);
  }
  return { version, names: names.length > 0 ? names : Object.keys(scenarios) };
}

/** Where `version`'s corpus goes, and its releases.json entry if it is released. */
function releaseTarget(version) {
  const { releases } = JSON.parse(readFileSync(path.join(root, 'releases.json'), 'utf8'));
  return {
    version,
    directory: path.join(releasesDirectory, version),
    release: releases.find((entry) => entry.version === version),
  };
}

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/**
 * A released corpus only grows, and only with histories its own workflow code wrote: refuse a file that exists, and
 * workflow code that differs from the release's commit (also for its first recording).
 */
function checkReleased(target, names) {
  if (!target.release) return;
  const present = existsSync(target.directory) ? readdirSync(target.directory) : [];
  const taken = names.filter((name) =>
    present.some((file) => file === `${name}.json` || file.startsWith(`${name}.run-`)),
  );
  if (taken.length > 0) {
    throw new Error(
      `${target.version} is released (releases.json) and its histories never change; already recorded: ` +
        `${taken.join(', ')}. Record a changed scenario under the next version: --release <next>.`,
    );
  }
  try {
    git('diff', '--quiet', target.release.commit, '--', 'src/workflows', 'src/shared');
  } catch {
    throw new Error(
      `the workflow code here is not release ${target.version}'s (commit ${target.release.commit}): histories added ` +
        `to its corpus must be recorded by it (check out its commit to record a missing corpus), or record under the ` +
        `next version: --release <next>.`,
    );
  }
}

/** The histories of every run of a workflow from `firstRunId` on, oldest first (continue-as-new links them). */
async function chainOfRuns(client, workflowId, firstRunId) {
  const histories = [];
  let runId = firstRunId;
  while (runId) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    histories.push(history);
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return histories;
}

/** Drive one scenario on its agent and return what it recorded: `{ state, history }`, in run order. */
async function recordScenario(name, scenario, agent) {
  const id = `replay-${name}`;
  const workflowId = conversationWorkflowId(id);
  const { temporal } = agent;
  const captured = [];
  const chains = [];
  const context = {
    id,
    workflowId,
    taskQueue: agent.taskQueue,
    temporal,
    client: agent.client,
    start: (input) =>
      temporal.workflow.start('conversationWorkflow', {
        taskQueue: agent.taskQueue,
        workflowId,
        args: [{ conversationId: id, ...input }],
      }),
    handle: (runId) => temporal.workflow.getHandle(workflowId, runId),
    record: (...firstRunIds) => chains.push(...firstRunIds),
    async capture(state, ready) {
      const history = await waitForHistory(temporal.workflow.getHandle(workflowId), ready);
      captured.push({ state, history });
    },
  };
  await scenario.run(context);
  for (const firstRunId of chains) {
    for (const history of await chainOfRuns(temporal, workflowId, firstRunId))
      captured.push({ state: 'finished', history });
  }
  if (captured.length === 0) throw new Error(`scenario ${name} recorded nothing`);
  return captured.map(({ state, history }, index) => ({
    file: captured.length === 1 ? `${name}.json` : `${name}.run-${index + 1}.json`,
    entry: {
      scenario: name,
      description: scenario.description,
      state,
      workflowId,
      encrypted: scenario.encrypted === true,
      ...(captured.length > 1 ? { run: index + 1 } : {}),
      events: history.events?.length ?? 0,
    },
    history,
  }));
}

async function waitForHistory(handle, ready) {
  for (let attempt = 0; attempt < 300; attempt++) {
    const history = await handle.fetchHistory();
    if (ready(history)) return history;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the history of ${handle.workflowId} never got to the state to capture`);
}

/**
 * A recorded history names the recording checkout in the stack traces of its failures (0.1.0's workers wrote stacks):
 * they become paths relative to the repository, `./src/…`, so no fixture names a path of the machine that recorded it.
 * Stack traces play no part in replay.
 */
export function withoutMachinePaths(json, checkout) {
  return json.split(`file://${checkout}/`).join('./').split(`${checkout}/`).join('./');
}

/** Write the histories and add their entries to the manifest (entries of files written before stay as they are). */
function writeCorpus(target, recorded) {
  mkdirSync(target.directory, { recursive: true });
  const manifestFile = path.join(target.directory, 'manifest.json');
  const manifest = existsSync(manifestFile)
    ? JSON.parse(readFileSync(manifestFile, 'utf8'))
    : {
        $comment:
          'Written by scripts/record-histories.mjs; replayed by test/replay/releases.test.ts. One entry per history ' +
          'file: its scenario, the state it was captured in (finished: whole runs; otherwise exported mid-flight), ' +
          'its workflow id, and whether its payloads are encrypted (with the key of test/codec/fixture-key.ts).',
        version: target.version,
        histories: [],
      };
  if (target.release) {
    // Checked before recording by scenario name; once more by file, before anything is written.
    const existing = recorded.filter(({ file }) => existsSync(path.join(target.directory, file)));
    if (existing.length > 0)
      throw new Error(`released histories would change: ${existing.map(({ file }) => file).join(', ')}`);
    manifest.workflowCode = target.release.commit;
  }
  // A release's corpus is recorded at one commit; a pre-release directory gathers histories over several, so there
  // each entry says its own.
  const commit = git('rev-parse', 'HEAD');
  if (target.release) manifest.recordedAtCommit ??= commit;
  const kept = manifest.histories.filter((entry) => !recorded.some((item) => item.file === entry.file));
  for (const { file, history } of recorded) {
    writeFileSync(path.join(target.directory, file), `${withoutMachinePaths(historyToJSON(history), root)}\n`);
  }
  const entries = recorded.map(({ file, entry }) => ({
    file,
    ...entry,
    ...(target.release ? {} : { recordedAtCommit: commit }),
  }));
  manifest.histories = [...kept, ...entries].sort((a, b) => a.file.localeCompare(b.file));
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
}

async function main(argv) {
  const { version, names } = parseArguments(argv);
  const target = releaseTarget(version);
  checkReleased(target, names);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  // One scripted model for all scenarios: each conversation (workflow id) has its own cursor and follows its own script.
  const scripts = new Map(names.map((name) => [conversationWorkflowId(`replay-${name}`), scenarios[name].script]));
  const env = await createLocalEnvironment();
  const model = await startScriptedModel({
    script: (request, { stepIndex }) => scripts.get(request.conversation)?.[stepIndex],
  });
  /** A worker, a client and a durable-agent client per kind of payload: `plain` and `encrypted` (the fixture key). */
  const agents = {};
  // Only the scenarios that say `agent: 'tasks'` see the task test server, so the other scenarios' tool lists stay;
  // `agent: 'task-extension'` sees one that also speaks 2026-07-28 (probed over HTTP, it gets the tasks extension).
  const taskServer = await startTaskMcpServer({ pollIntervalMs: 1000 });
  const extensionServer = await startTaskMcpServer({ pollIntervalMs: 1000, extension: true });
  try {
    for (const [kind, server] of [
      ['tasks', taskServer],
      ['task-extension', extensionServer],
    ]) {
      const agent = await startTestAgent({
        env,
        model,
        mcpServers: [
          testServer,
          { name: 'tasks', transport: 'http', url: server.url, headers: {}, allowTools: undefined, denyTools: [] },
        ].map((config) => ({ timeoutMs: 60_000, disabled: false, ...config })),
        taskQueue: `record-histories-${kind}-${process.pid}`,
      });
      agents[kind] = {
        agent,
        temporal: env.client,
        taskQueue: agent.taskQueue,
        client: new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue }),
      };
    }
    for (const encrypted of [false, true]) {
      const keys = encrypted ? [FIXTURE_KEY] : undefined;
      const agent = await startTestAgent({
        env,
        model,
        mcpServers: [testServer],
        taskQueue: `record-histories-${encrypted ? 'encrypted-' : ''}${process.pid}`,
        workerOptions: keys ? { encryptionKeys: keys } : {},
      });
      const temporal = encrypted
        ? new Client({ connection: env.connection, dataConverter: encryptionDataConverter(keys) })
        : env.client;
      const client = new DurableAgentClient({ client: temporal, taskQueue: agent.taskQueue });
      agents[encrypted ? 'encrypted' : 'plain'] = { agent, temporal, taskQueue: agent.taskQueue, client };
    }
    const recorded = [];
    for (const name of names) {
      const started = Date.now();
      const scenario = scenarios[name];
      const files = await recordScenario(
        name,
        scenario,
        agents[scenario.agent ?? (scenario.encrypted ? 'encrypted' : 'plain')],
      );
      recorded.push(...files);
      for (const { file, entry } of files) console.log(`${file}: ${entry.state}, ${entry.events} events`);
      console.log(`${name}: recorded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    writeCorpus(target, recorded);
    console.log(`${recorded.length} histories written to ${path.relative(root, target.directory)}`);
  } finally {
    for (const { agent } of Object.values(agents)) await agent.close();
    await taskServer.close();
    await extensionServer.close();
    await model.close();
    await env.teardown();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
