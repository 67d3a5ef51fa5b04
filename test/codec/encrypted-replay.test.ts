import { readFileSync } from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { encryptionDataConverter } from '../../src/codec/data-converter.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { allText } from '../helpers/secrets.js';
import { FIXTURE_KEY, FIXTURE_TEXT } from './fixture-key.js';
import { encodingOf, payloadsIn } from './history-payloads.js';

/**
 * A recorded encrypted history (test/fixtures/encrypted-histories, a turn with a tool call, encrypted with
 * {@link FIXTURE_KEY}): it replays on the current workflow code with the worker's data converter, and the codec as it
 * is now still decrypts every payload. A change of the codec's format that could not read what earlier versions wrote
 * fails here.
 */

const file = new URL('../fixtures/encrypted-histories/plain-turn.json', import.meta.url);
const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
const workflowId = 'conversation-replay-encrypted-plain-turn';

describe('a recorded encrypted history', () => {
  it('stores no message, tool text or answer in the clear', () => {
    const stored = allText(history);
    for (const text of Object.values(FIXTURE_TEXT)) expect(stored).not.toContain(text);
    expect(payloadsIn(history).filter((payload) => encodingOf(payload) === 'binary/encrypted').length).toBeGreaterThan(
      10,
    );
  });

  it('decrypts with the fixture key: the message, the tool call and the answer are there', async () => {
    const encrypted = payloadsIn(history).filter((payload) => encodingOf(payload) === 'binary/encrypted');
    const decrypted = allText(await new EncryptionCodec([FIXTURE_KEY]).decode(encrypted));
    for (const text of Object.values(FIXTURE_TEXT)) expect(decrypted).toContain(text);
  });

  it("replays on the current workflow code with the worker's data converter", async () => {
    const workflowBundle = await bundleWorkflows();
    await expect(
      Worker.runReplayHistory(
        { workflowBundle, dataConverter: encryptionDataConverter([FIXTURE_KEY]) },
        history,
        workflowId,
      ),
    ).resolves.toBeUndefined();
  });

  it('does not replay without the key: the failure names the key id it needs', async () => {
    const workflowBundle = await bundleWorkflows();
    const replay = Worker.runReplayHistory(
      { workflowBundle, dataConverter: encryptionDataConverter([]) },
      history,
      workflowId,
    );
    await expect(replay).rejects.toThrow(/fixture-2026/);
  });
});
