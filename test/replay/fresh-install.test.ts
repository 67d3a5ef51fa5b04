import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { resolveDevServer } from '../../src/temporal-servers/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { askUpdate, conversationWorkflowId, endSignal } from '../../src/workflows/definitions.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';

/**
 * Replay as a user of the published package does it: `npm pack` this package, install the tarball into a new project
 * (from the npm cache), export a conversation's history with the real `temporal` CLI, and replay it there with
 * `Worker.runReplayHistory` on the parsed JSON, Temporal's standard path. It failed with "type must be a Type" while
 * the installed tree held several protobufjs 8 copies (see docs/reliability.md, "Replay").
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let workDir: string;
let project: string;
let env: TestWorkflowEnvironment | undefined;
let crm: Crm | undefined;
let agent: TestAgent | undefined;
const conversationId = 'fresh-install-replay';

/** Pack the built package and install the tarball into a new project. */
async function installPackedPackage(): Promise<void> {
  if (!existsSync(path.join(root, 'dist/workflows/index.js'))) throw new Error('dist/ is missing: run npm run build');
  // --ignore-scripts: `prepare` would rebuild dist/, which `npm test` has just built.
  const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', workDir], {
    cwd: root,
  });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({
      name: 'fresh-durable-agent-user',
      private: true,
      type: 'module',
      // durable-agent alone, as the issue found it: the SDK packages come with it, as peer dependencies npm installs.
      // (A project that also lists @temporalio/worker itself got one protobufjs 8 copy even before the fix: its own
      // dependencies are placed first.)
      dependencies: { 'durable-agent': `file:${path.join(workDir, filename)}` },
    }),
  );
  await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: project,
    maxBuffer: 16 * 1024 * 1024,
  });
  copyFileSync(
    fileURLToPath(new URL('./fresh-project/replay-history.mjs', import.meta.url)),
    path.join(project, 'replay-history.mjs'),
  );
}

/** A conversation with a tool call on a real dev server, closed, so its history is complete. */
async function runConversation(): Promise<void> {
  env = await createLocalEnvironment();
  crm = await startCrm();
  agent = await startTestAgent({
    env,
    mcpServers: [crm.config()],
    script: [
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { content: 'Ada Lovelace works at Analytical Engines Ltd.' },
      { content: 'London.' },
    ],
  });
  const handle = await agent.startConversation(conversationId, {
    messages: [{ id: 'm-1', content: 'Where does Ada work?' }],
  });
  await handle.executeUpdate(askUpdate, { args: [{ id: 'm-2', content: 'In which city?' }] });
  await handle.signal(endSignal, {});
  await handle.result();
}

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-fresh-install-'));
  project = path.join(workDir, 'project');
  mkdirSync(project);
  await Promise.all([installPackedPackage(), runConversation()]);
}, 180_000);

afterAll(async () => {
  await agent?.close();
  await crm?.close();
  await env?.teardown();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('a fresh install of the packed package', () => {
  it('replay: the Temporal SDK packages share one protobufjs 8 copy (several copies break historyFromJSON)', async () => {
    const { stdout } = await run(npm, ['ls', 'protobufjs', '--all', '--parseable', '--long'], { cwd: project });
    const copies = stdout
      .trim()
      .split('\n')
      .filter((line) => /:protobufjs@8\./.test(line))
      .map((line) => path.relative(project, line.split(':')[0] ?? ''));
    expect(copies).toEqual([path.join('node_modules', 'protobufjs')]);
  });

  it('replay: a history exported with `temporal workflow show --output json` replays with Worker.runReplayHistory', async () => {
    const cli = await resolveDevServer(loadConfig());
    if (cli.kind !== 'path') throw new Error(`no temporal CLI: ${cli.reason}`);
    const workflowId = conversationWorkflowId(conversationId);
    const historyFile = path.join(workDir, 'history.json');
    const { stdout: exported } = await run(
      cli.path,
      ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', env!.address],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    writeFileSync(historyFile, exported);
    expect((JSON.parse(exported) as { events: unknown[] }).events.length).toBeGreaterThan(10);

    const replay = await run(process.execPath, ['replay-history.mjs', historyFile, workflowId], { cwd: project }).catch(
      (error: Error & { stderr?: string }) => {
        throw new Error(`replay in the fresh project failed: ${error.stderr?.split('\n').slice(-20).join('\n')}`);
      },
    );
    expect(replay.stdout).toMatch(new RegExp(`replayed ${workflowId}: \\d+ events`));
  });

  it('ships the JSON Schemas: durable-agent/schemas/* resolves to the committed files', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { createRequire } from 'node:module'; console.log(createRequire(process.cwd() + '/').resolve('durable-agent/schemas/incoming-message.schema.json'));",
      ],
      { cwd: project },
    );
    expect(readFileSync(stdout.trim(), 'utf8')).toBe(
      readFileSync(path.join(root, 'schemas/incoming-message.schema.json'), 'utf8'),
    );
  });
});
