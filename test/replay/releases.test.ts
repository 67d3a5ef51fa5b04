import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type ReplayWorkerOptions, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { encryptionDataConverter } from '../../src/codec/data-converter.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { FIXTURE_KEY } from '../codec/fixture-key.js';
import * as releaseCorpus from './release-corpus.js';
import type { CorpusHistory } from './release-corpus.js';

/**
 * Replays the corpus of every release (test/fixtures/releases/<version>/, recorded once by that release's worker with
 * scripts/record-histories.mjs and never re-recorded) against the workflow code as it is now: what a new worker meets
 * when it is deployed over conversations the old one started, finished runs and runs caught mid-flight alike. A change
 * to the workflow that takes another path on any of them fails here; it must go behind `patched()` instead.
 */

const versions = releaseCorpus.corpusVersions();
const released = releaseCorpus.releases();

type Mode = 'with the workflow cache' | 'without a workflow cache (maxCachedWorkflows: 0)';
// `maxCachedWorkflows` is left out of ReplayWorkerOptions' type, not of the options the SDK hands to the core replay
// worker. A replay worker takes each history in one pass from its first event either way, so the two modes are expected
// to agree; the uncached run guards that a replay worker set up like an uncached production worker accepts the corpus
// too. Uncached live execution (every task a full replay) is no-cache.test.ts's subject.
const MODES: Record<Mode, Partial<ReplayWorkerOptions>> = {
  'with the workflow cache': {},
  'without a workflow cache (maxCachedWorkflows: 0)': { maxCachedWorkflows: 0 } as Partial<ReplayWorkerOptions>,
};

/** Replay `histories` in one batch; the files that failed, with the error's first line. */
async function replayFailures(histories: CorpusHistory[], options: ReplayWorkerOptions): Promise<string[]> {
  const failures: string[] = [];
  let index = 0;
  for await (const result of Worker.runReplayHistories(options, histories)) {
    const { file } = histories[index++]!;
    if (result.error) failures.push(`${file}: ${result.error.name}: ${result.error.message.split('\n')[0]}`);
  }
  expect(index).toBe(histories.length);
  return failures;
}

describe('the replay corpus of each release', () => {
  it('has a corpus for every release in releases.json: test/fixtures/releases/<version> with histories', () => {
    expect(released.length).toBeGreaterThan(0);
    for (const release of released) {
      expect(release.histories, release.version).toBe(`test/fixtures/releases/${release.version}`);
      expect(versions, `no corpus for release ${release.version}: record it (docs/reliability.md)`).toContain(
        release.version,
      );
      expect(releaseCorpus.historyFiles(release.version).length, release.version).toBeGreaterThan(0);
    }
  });

  it('says what a corpus of no release is: a README.md in its directory', () => {
    for (const version of versions.filter((entry) => !released.some((release) => release.version === entry))) {
      expect(existsSync(path.join(releaseCorpus.RELEASES_DIR, version, 'README.md')), `${version}/README.md`).toBe(
        true,
      );
    }
  });

  it.each(versions)(
    '%s: its manifest has one entry per history file, each with its state and workflow id',
    (version) => {
      const manifest = releaseCorpus.readManifest(version);
      expect(manifest.version).toBe(version);
      expect(manifest.histories.map((entry) => entry.file).sort()).toEqual(releaseCorpus.historyFiles(version));
      for (const entry of manifest.histories) {
        expect(entry, entry.file).toMatchObject({
          scenario: expect.any(String),
          state: expect.any(String),
          workflowId: expect.stringMatching(/^conversation-/),
          encrypted: expect.any(Boolean),
        });
      }
    },
  );

  const cases = versions.flatMap((version) => Object.keys(MODES).map((mode) => [version, mode as Mode] as const));
  it.each(cases)('replay: the %s corpus replays on the current workflow code, %s', async (version, mode) => {
    const corpus = releaseCorpus.loadCorpus(version);
    const plain = corpus.filter((entry) => !entry.encrypted);
    const encrypted = corpus.filter((entry) => entry.encrypted);
    const failures = [
      ...(await replayFailures(plain, { workflowBundle: await bundleWorkflows(), ...MODES[mode] })),
      // As the worker with keys wrote them: its data converter, and the bundle with its failure converter.
      ...(encrypted.length === 0
        ? []
        : await replayFailures(encrypted, {
            workflowBundle: await bundleWorkflows({ encodeFailures: true }),
            dataConverter: encryptionDataConverter([FIXTURE_KEY]),
            ...MODES[mode],
          })),
    ];
    expect(failures).toEqual([]);
  });

  it("replay: the newest release's corpus catches an incompatible change (an extra activity first): every history fails", async () => {
    const newest = released.at(-1)!;
    const corpus = releaseCorpus.loadCorpus(newest.version).filter((entry) => !entry.encrypted);
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./changed-workflows.ts', import.meta.url)),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    const outcomes: string[] = [];
    let index = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle }, corpus)) {
      const { file } = corpus[index++]!;
      outcomes.push(`${file}: ${result.error instanceof DeterminismViolationError ? 'non-determinism' : 'replayed'}`);
    }
    expect(corpus.length).toBeGreaterThan(0);
    expect(outcomes).toEqual(corpus.map((entry) => `${entry.file}: non-determinism`));
  });
});
