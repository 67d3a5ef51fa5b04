import { describe, expect, it } from 'vitest';
import { causeChain, errorMessage } from '../../src/shared/errors.js';

describe('errorMessage', () => {
  it("is an Error's message, with its direct cause's when the message does not already say it", () => {
    expect(errorMessage(new Error('fetch failed', { cause: new Error('connect ECONNREFUSED') }))).toBe(
      'fetch failed (connect ECONNREFUSED)',
    );
    expect(errorMessage(new Error('boom: inner', { cause: new Error('inner') }))).toBe('boom: inner');
    expect(errorMessage(new TypeError('plain'))).toBe('plain');
  });

  it('is the value as text for anything else thrown', () => {
    expect(errorMessage('a string')).toBe('a string');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});

describe('causeChain', () => {
  it('yields the error and each cause in turn, plain objects included, and stops at a loop', () => {
    const socket = { code: 'ECONNREFUSED' };
    const inner = new Error('inner', { cause: socket });
    const outer = new Error('outer', { cause: inner });
    expect([...causeChain(outer)]).toEqual([outer, inner, socket]);

    const looped = new Error('looped');
    (looped as { cause?: unknown }).cause = looped;
    expect([...causeChain(looped)]).toEqual([looped]);
    expect([...causeChain('not an object')]).toEqual([]);
  });
});
