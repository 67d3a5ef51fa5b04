import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toOutputFormat } from '../../src/client/output-format.js';
import { validateMessage } from '../../src/workflows/conversation-state.js';
import { correctionsAllowed, outputFormatProblem, readOutput } from '../../src/workflows/structured-output.js';

const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

describe('structured output rules', () => {
  it('reads JSON, also inside a Markdown code fence, and says what does not match', () => {
    expect(readOutput({ schema }, '{"n": 1}')).toEqual({ ok: true, value: { n: 1 } });
    expect(readOutput({ schema }, '```json\n{"n": 2}\n```')).toEqual({ ok: true, value: { n: 2 } });
    expect(readOutput({ schema }, '{"n": 1.5}')).toEqual({ ok: false, problem: '/n must be integer' });
    expect(readOutput({ schema }, null)).toEqual({ ok: false, problem: 'the answer is empty' });
    expect(readOutput({ schema }, 'n is 1')).toMatchObject({ ok: false, problem: /^the answer is not JSON/ });
  });

  it('allows 2 corrections by default, and what the format says otherwise', () => {
    expect(correctionsAllowed({ schema })).toBe(2);
    expect(correctionsAllowed({ schema, maxCorrections: 0 })).toBe(0);
  });

  it('a message with an unusable output format is refused by name, saying what to fix', () => {
    expect(outputFormatProblem({ schema })).toBeUndefined();
    expect(outputFormatProblem({ schema: 'x' })).toMatch(/"output.schema" must be a JSON Schema object/);
    expect(outputFormatProblem({ schema: { type: 'nope' } })).toMatch(/"output.schema" is not a usable JSON Schema/);
    expect(outputFormatProblem({ schema, name: 'a b' })).toMatch(/"output.name" must be 1 to 64 letters/);
    expect(() => validateMessage({ id: 'm', content: 'hi', output: { schema: 3 } }, {})).toThrow(/"output.schema"/);
  });

  it('the client writes a zod schema as the JSON Schema of what it outputs', async () => {
    const format = await toOutputFormat({ schema: z.object({ n: z.number().int() }), name: 'count' });
    expect(format).toEqual({
      name: 'count',
      schema: {
        type: 'object',
        properties: { n: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } },
        required: ['n'],
        additionalProperties: false,
      },
    });
  });
});
