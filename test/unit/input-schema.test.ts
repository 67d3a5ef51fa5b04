import { describe, expect, it } from 'vitest';
import { inputContentProblems } from '../../src/shared/input-schema.js';
import type { JsonObject } from '../../src/shared/types.js';

/** The answer-content check of MCP elicitation (form mode): a flat object of primitive fields. */
const schema: JsonObject = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 10 },
    email: { type: 'string', format: 'email' },
    homepage: { type: 'string', format: 'uri' },
    birthdate: { type: 'string', format: 'date' },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    score: { type: 'number' },
    agree: { type: 'boolean' },
    color: { type: 'string', enum: ['red', 'blue'] },
    hero: { type: 'string', oneOf: [{ const: 'hero-1', title: 'Superman' }] },
    instruments: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string', enum: ['guitar', 'piano'] } },
    fish: { type: 'array', items: { anyOf: [{ const: 'fish-1' }, { const: 'fish-2' }] } },
  },
  required: ['name'],
};

describe('inputContentProblems', () => {
  it('accepts content that fits, with optional fields left out', () => {
    expect(inputContentProblems(schema, { name: 'Ada' })).toEqual([]);
    expect(
      inputContentProblems(schema, {
        name: 'Ada',
        email: 'ada@example.com',
        homepage: 'https://ada.example',
        birthdate: '1815-12-10',
        age: 36,
        score: 2.5,
        agree: true,
        color: 'blue',
        hero: 'hero-1',
        instruments: ['piano'],
        fish: ['fish-1', 'fish-2'],
      }),
    ).toEqual([]);
  });

  it('names each field that does not fit, and why', () => {
    expect(
      inputContentProblems(schema, {
        email: 'not an address',
        homepage: 'no scheme',
        birthdate: '10 Dec 1815',
        age: 1.5,
        score: '3',
        agree: 'yes',
        color: 'green',
        hero: 'hero-9',
        instruments: ['guitar', 'piano', 'guitar'],
        fish: ['fish-3'],
        extra: 1,
      }),
    ).toEqual([
      '"name" is required',
      '"email" must be a valid email',
      '"homepage" must be a valid uri',
      '"birthdate" must be a valid date',
      '"age" must be an integer, got number',
      '"score" must be a number, got string',
      '"agree" must be true or false, got string',
      '"color" must be one of "red", "blue", got "green"',
      '"hero" must be one of "hero-1", got "hero-9"',
      '"instruments" must be at most 2 choices, got 3',
      '"fish" must be one of "fish-1", "fish-2", got "fish-3"',
      `"extra" is not a requested field (requested: ${Object.keys(schema.properties as object).join(', ')})`,
    ]);
    expect(inputContentProblems(schema, { name: '' })).toEqual(['"name" must be at least 1 characters, got 0']);
    expect(inputContentProblems(schema, { name: 'Ada', age: -1 })).toEqual(['"age" must be at least 0, got -1']);
    expect(inputContentProblems(schema, { name: null })).toEqual(['"name" must be a string, got null']);
  });
});
