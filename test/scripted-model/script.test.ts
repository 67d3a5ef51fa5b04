import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import {
  loadScriptFile,
  ScriptValidationError,
  startScriptedModel,
  validateScript,
} from '../../src/testing/scripted-model/index.js';

function validationMessage(value: unknown): string {
  try {
    validateScript(value, 'script.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ScriptValidationError);
    return (error as Error).message;
  }
  throw new Error('expected the script to be rejected');
}

describe('script validation: every message names the source, the step, the key and what was expected', () => {
  it('accepts each step kind with its options', () => {
    const script = [
      {
        content: 'Hi',
        delayMs: 5,
        delayAttempts: 1,
        chunkDelayMs: 1,
        failAfterChunks: 2,
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      },
      {
        toolCalls: [{ name: 'files__list' }, { name: 'files__read', arguments: '{bad json' }],
        finishReason: 'tool_calls',
      },
      { error: { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'slow down' } }, times: 2 } },
      { error: { status: 502, body: 'Bad gateway' }, delayMs: 10 },
    ];

    expect(validateScript(script, 'script.json')).toBe(script);
  });

  it('rejects a script that is not an array', () => {
    expect(validationMessage({ content: 'Hi' })).toBe(
      'script.json: expected a JSON array of steps, got {"content":"Hi"}.',
    );
  });

  it('rejects a step without content, toolCalls or error', () => {
    expect(validationMessage([{ content: 'ok' }, { delayMs: 5 }])).toBe(
      'script.json: step 1: expected an object with "content", "toolCalls" or "error", got {"delayMs":5}.',
    );
  });

  it('rejects an unknown key, listing the keys a step may have', () => {
    const message = validationMessage([{ content: 'Hi', delay: 5 }]);
    expect(message).toContain('script.json: step 0 "delay": expected one of the keys "content", "toolCalls"');
    expect(message).toContain('"delayMs"');
  });

  it('rejects content that is not a string', () => {
    expect(validationMessage([{ content: 42 }])).toBe('script.json: step 0 "content": expected a string, got 42.');
  });

  it('rejects empty tool calls, a tool call without a name, and arguments that are neither object nor string', () => {
    expect(validationMessage([{ toolCalls: [] }])).toContain('step 0 "toolCalls": expected a non-empty array');
    expect(validationMessage([{ toolCalls: [{ arguments: {} }] }])).toContain(
      'step 0 "toolCalls[0].name": expected a non-empty string, got nothing.',
    );
    expect(validationMessage([{ toolCalls: [{ name: 'a' }, { name: 'b', arguments: [1] }] }])).toContain(
      'step 0 "toolCalls[1].arguments": expected an object or a string, got an array.',
    );
  });

  it('rejects an error without a status, or with a status, times or header of the wrong kind', () => {
    expect(validationMessage([{ error: {} }])).toContain(
      'step 0 "error.status": expected an HTTP status from 400 to 599',
    );
    expect(validationMessage([{ error: { status: 200 } }])).toContain(
      'step 0 "error.status": expected a whole number from 400 to 599, got 200.',
    );
    expect(validationMessage([{ error: { status: 429, times: 0 } }])).toContain(
      'step 0 "error.times": expected a whole number 1 or more, got 0.',
    );
    expect(validationMessage([{ error: { status: 429, headers: { 'retry-after': 1 } } }])).toContain(
      'step 0 "error.headers.retry-after": expected a string, got 1.',
    );
  });

  it('rejects streaming options on an error step, where they would do nothing', () => {
    expect(validationMessage([{ error: { status: 500 }, failAfterChunks: 1 }])).toContain(
      'step 0 "failAfterChunks": expected one of the keys "error", "delayMs"',
    );
  });

  it('rejects delayAttempts on an error step, whose every attempt is a step of its own', () => {
    expect(validationMessage([{ error: { status: 500 }, delayMs: 10, delayAttempts: 1 }])).toContain(
      'step 0 "delayAttempts": expected one of the keys "error", "delayMs"',
    );
  });

  it('rejects negative or fractional delays and counts, and an incomplete usage', () => {
    expect(validationMessage([{ content: 'x', delayMs: -1 }])).toContain(
      'step 0 "delayMs": expected a whole number 0 or more',
    );
    expect(validationMessage([{ content: 'x', delayMs: 10, delayAttempts: 0 }])).toContain(
      'step 0 "delayAttempts": expected a whole number 1 or more, got 0.',
    );
    expect(validationMessage([{ content: 'x', failAfterChunks: 1.5 }])).toContain('step 0 "failAfterChunks"');
    expect(validationMessage([{ content: 'x', usage: { prompt_tokens: 1 } }])).toContain(
      'step 0 "usage.completion_tokens": expected a whole number, got nothing.',
    );
  });

  it('usage details: cached and reasoning tokens in the wire shape; anything else in them is refused', () => {
    const usage = { prompt_tokens: 10, completion_tokens: 5 };
    const details = { prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 2 } };
    expect(() => validateScript([{ content: 'x', usage: { ...usage, ...details } }], 'script.json')).not.toThrow();
    expect(validationMessage([{ content: 'x', usage: { ...usage, prompt_tokens_details: { cached: 4 } } }])).toContain(
      'step 0 "usage.prompt_tokens_details.cached": expected one of the keys "cached_tokens"',
    );
    expect(
      validationMessage([{ content: 'x', usage: { ...usage, completion_tokens_details: { reasoning_tokens: -1 } } }]),
    ).toContain('step 0 "usage.completion_tokens_details.reasoning_tokens": expected a whole number 0 or more');
    expect(validationMessage([{ content: 'x', usage: { ...usage, prompt_tokens_details: 4 } }])).toContain(
      'step 0 "usage.prompt_tokens_details": expected an object {"cached_tokens"}, got 4.',
    );
  });

  it("usage: the cache in Anthropic's spelling is accepted, whole numbers only, and never beside OpenAI's", () => {
    const usage = { prompt_tokens: 10, completion_tokens: 5 };
    const anthropic = { cache_creation_input_tokens: 7, cache_read_input_tokens: 3 };
    const reasoning = { completion_tokens_details: { reasoning_tokens: 2 } };
    expect(() =>
      validateScript([{ content: 'x', usage: { ...usage, ...anthropic, ...reasoning } }], 'script.json'),
    ).not.toThrow();
    expect(validationMessage([{ content: 'x', usage: { ...usage, cache_read_input_tokens: 1.5 } }])).toContain(
      'step 0 "usage.cache_read_input_tokens": expected a whole number 0 or more, got 1.5.',
    );
    const mixed = { ...usage, cache_read_input_tokens: 3, prompt_tokens_details: { cached_tokens: 3 } };
    expect(validationMessage([{ content: 'x', usage: mixed }])).toContain(
      'step 0 "usage.prompt_tokens_details": expected no "prompt_tokens_details" beside "cache_read_input_tokens"',
    );
  });

  it('rejects an unknown finishReason', () => {
    expect(validationMessage([{ content: 'x', finishReason: 'done' }])).toContain(
      'step 0 "finishReason": expected one of "stop", "tool_calls", "length", "content_filter", got "done".',
    );
  });

  it('startScriptedModel rejects an invalid script before listening, naming it by its name', async () => {
    await expect(startScriptedModel({ name: 'my-test', script: [{ contents: 'Hi' }] as never })).rejects.toThrow(
      /^my-test: step 0/,
    );
  });

  it('a script validation error is a ConfigError, so the CLI reports it as a usage error', () => {
    expect(new ScriptValidationError('x')).toBeInstanceOf(ConfigError);
  });
});

describe('loadScriptFile', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'scripted-model-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('reads a JSON array of steps', async () => {
    const file = path.join(directory, 'good.json');
    await writeFile(file, JSON.stringify([{ content: 'Hi' }]));

    expect(await loadScriptFile(file)).toEqual([{ content: 'Hi' }]);
  });

  it('names the file when it is not valid JSON', async () => {
    const file = path.join(directory, 'broken.json');
    await writeFile(file, '[{"content": "Hi"},]');

    await expect(loadScriptFile(file)).rejects.toThrow(`${file}: not valid JSON`);
  });

  it('names the file and the step when a step is invalid', async () => {
    const file = path.join(directory, 'invalid.json');
    await writeFile(file, JSON.stringify([{ content: 'Hi' }, { toolCalls: 'files__list' }]));

    await expect(loadScriptFile(file)).rejects.toThrow(`${file}: step 1 "toolCalls": expected a non-empty array`);
  });

  it('names the file when it cannot be read', async () => {
    const file = path.join(directory, 'missing.json');

    await expect(loadScriptFile(file)).rejects.toThrow(`Cannot read the script ${file}`);
  });
});
