import { createHash } from 'node:crypto';
import type { EncryptionKey } from '../../src/codec/keys.js';

/**
 * The key of test/fixtures/encrypted-histories: derived from a fixed phrase, so the recorded histories can be decrypted
 * by every later version of the codec (a format change that cannot read them fails the replay test). Tests only.
 */
export const FIXTURE_KEY: EncryptionKey = {
  id: 'fixture-2026',
  key: createHash('sha256').update('durable-agent encrypted history fixture key').digest(),
};

/** What the recorded conversation said, to find in the decrypted payloads. */
export const FIXTURE_TEXT = {
  message: 'Echo the fixture word, please.',
  tool: 'fixture-word-7f3a',
  answer: 'The tool echoed fixture-word-7f3a.',
};
