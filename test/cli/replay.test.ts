import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { startCliAgent, type CliAgent } from './cli-agent.js';
import { killAll, runCli } from './helpers.js';

/**
 * `durable-agent replay`, the check before a deploy (docs/upgrading.md): a history this version takes over replays;
 * one it would strand fails with exit code 7 and names the conversation.
 */

const fixtures = (directory: string) => fileURLToPath(new URL(`../fixtures/${directory}/`, import.meta.url));
const recorded = readdirSync(fixtures('histories'))
  .filter((file) => file.endsWith('.json'))
  .map((file) => `${fixtures('histories')}${file}`);
/** A first run recorded before the earlier-run check (commit dd0e1a7): today's code schedules a local activity first. */
const stranded = `${fixtures('not-replayable')}plain-turn.dd0e1a7.json`;

describe('replay: exported history files, no server needed', () => {
  afterAll(killAll);

  it('replay: recorded histories replay on this version; exit 0 and one ok line each', async () => {
    const run = await runCli(['replay', ...recorded], process.env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(ExitCode.Ok);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('ok '))).toHaveLength(recorded.length);
    expect(run.stdout).toContain(`${recorded.length} replayed, 0 failed`);
  });

  it('replay: a history this version would strand fails by name with exit code 7, the others still replay', async () => {
    const run = await runCli(['replay', '--json', recorded[0]!, stranded], process.env);
    expect(run.code).toBe(ExitCode.NotReplayable);
    const report = JSON.parse(run.stdout) as {
      replayed: number;
      failed: number;
      histories: { workflowId: string; error?: { name: string; message: string } }[];
    };
    // Replayed counts what passed (it said "2 replayed, 1 failed" of two histories).
    expect(report).toMatchObject({ replayed: 1, failed: 1 });
    expect(report.histories.find((entry) => entry.error === undefined)).toBeDefined();
    const failure = report.histories.find((entry) => entry.workflowId === 'plain-turn.dd0e1a7.json');
    expect(failure?.error?.name).toBe('DeterminismViolationError');
    expect(failure?.error?.message).toMatch(/Nondeterminism|No command scheduled/i);
    expect(run.stderr).toContain('1 of 2 histories do not replay on this version');
  });

  it('replay: the closing line counts what replayed and what failed, which add up to the histories given', async () => {
    const run = await runCli(['replay', recorded[0]!, stranded], process.env);
    expect(run.code).toBe(ExitCode.NotReplayable);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('1 replayed, 1 failed');
  });

  it('replay: a file that is not a history says how to export one', async () => {
    const run = await runCli(['replay', fileURLToPath(new URL('../../package.json', import.meta.url))], process.env);
    expect(run.code).not.toBe(ExitCode.Ok);
    expect(run.stderr).toContain('temporal workflow show --workflow-id conversation-<id> --output json');
  });
});

describe('replay: the open conversations of a running deployment', () => {
  let cli: CliAgent;

  beforeAll(async () => {
    cli = await startCliAgent({ script: [{ content: 'Noted.' }, { content: 'Noted again.' }] });
  });
  afterAll(async () => {
    await cli?.close();
  });

  it('replay: with no files, replays every open conversation of the task queue', async () => {
    await cli.client.ask('replay-idle', 'Remember this.');
    await cli.client.ask('replay-ended', 'And this.');
    await cli.client.end('replay-ended');
    // Visibility is eventually consistent: wait until the list shows one open conversation and one closed.
    await expect
      .poll(async () => (await cli.client.list({})).map((entry) => `${entry.conversationId}:${entry.open}`).sort(), {
        timeout: 20_000,
      })
      .toEqual(['replay-ended:false', 'replay-idle:true']);
    const run = await cli.cli('replay', '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(ExitCode.Ok);
    expect(JSON.parse(run.stdout)).toEqual({
      replayed: 1,
      failed: 0,
      histories: [{ workflowId: 'conversation-replay-idle' }],
    });
  });
});
