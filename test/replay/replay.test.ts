import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { loadFixtures } from './history-json.js';

/**
 * Replays the first recorded histories (test/fixtures/histories, from before the per-release corpus that
 * releases.test.ts replays) against the workflow code as it is now. A change that would take another path on replay,
 * and so break every conversation running in production when the new worker picks it up, fails here first. They are
 * never re-recorded; new histories go into the next release's corpus (docs/reliability.md, "Replay").
 */

const fixtures = loadFixtures();

describe('replay of recorded conversation histories', () => {
  it('has the representative histories: plain turn, parallel tools, budget, interrupt, continue-as-new', () => {
    expect(fixtures.map((fixture) => fixture.file)).toEqual(
      expect.arrayContaining([
        'plain-turn.json',
        'parallel-tools.json',
        'budget-exhausted.json',
        'interrupt.json',
        'continue-as-new.run-1.json',
        'continue-as-new.run-2.json',
      ]),
    );
  });

  it.each(fixtures.map((fixture) => [fixture.file, fixture] as const))(
    'replay: %s replays on the current workflow code without a determinism error',
    async (_file, fixture) => {
      const workflowBundle = await bundleWorkflows();
      await expect(
        Worker.runReplayHistory({ workflowBundle }, fixture.history, fixture.workflowId),
      ).resolves.toBeUndefined();
    },
  );

  it('replay: all fixtures in one replay worker (as CI replays a batch)', async () => {
    const workflowBundle = await bundleWorkflows();
    const results = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle }, fixtures)) results.push(result);
    expect(results.map((result) => [result.workflowId, result.error])).toEqual(
      fixtures.map((fixture) => [fixture.workflowId, undefined]),
    );
  });

  it('replay: an incompatible change (an extra activity before the first turn) fails as non-determinism', async () => {
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./changed-workflows.ts', import.meta.url)),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    for (const fixture of fixtures.filter((entry) => /^(plain-turn|parallel-tools)\.json$/.test(entry.file))) {
      const replay = Worker.runReplayHistory({ workflowBundle }, fixture.history, fixture.workflowId);
      await expect(replay, fixture.file).rejects.toBeInstanceOf(DeterminismViolationError);
    }
  });
});
