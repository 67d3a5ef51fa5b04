import { describe, expect, it } from 'vitest';
import { fieldPrompt, inputFields, jsonAnswer, parseField } from '../../src/cli/chat/input-fields.js';
import type { InputRequest } from '../../src/workflows/definitions.js';

/** How the chat reads a typed line as a field of a server's form (MCP elicitation's flat schema). */

const request: InputRequest = {
  requestId: 'call_1:1:1',
  callId: 'call_1',
  turn: 1,
  tool: 'everything__trigger-elicitation-request',
  server: 'everything',
  message: 'Tell us about you.',
  mode: 'form',
  requestedSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name' },
      score: { type: 'number' },
      subscribe: { type: 'boolean' },
      colour: { type: 'string', enum: ['red', 'green'] },
    },
    required: ['name', 'subscribe'],
  },
  requestedAt: '2026-11-23T10:00:00.000Z',
  expiresAt: '2026-11-23T10:10:00.000Z',
};

describe('form fields in chat', () => {
  const [name, score, subscribe, colour] = inputFields(request);

  it('lists the fields in order, with type, required, title and choices', () => {
    expect([name, score, subscribe, colour].map((field) => fieldPrompt(field!))).toEqual([
      '  name (string, required) Name: ',
      '  score (number): ',
      '  subscribe (boolean, required): ',
      '  colour (string) one of "red", "green": ',
    ]);
  });

  it('reads numbers, booleans and choices, and says what a wrong value should be', () => {
    expect(parseField(score!, '2.5')).toEqual({ value: 2.5 });
    expect(parseField(score!, 'lots')).toEqual({ error: 'score: expected a number, got lots.' });
    expect(parseField(subscribe!, 'Yes')).toEqual({ value: true });
    expect(parseField(subscribe!, 'n')).toEqual({ value: false });
    expect(parseField(subscribe!, 'maybe')).toEqual({ error: 'subscribe: expected y or n, got maybe.' });
    expect(parseField(colour!, 'green')).toEqual({ value: 'green' });
    expect(parseField(colour!, 'blue')).toEqual({ error: 'colour: expected one of "red", "green".' });
  });

  it('skips an empty optional field and asks again for an empty required one', () => {
    expect(parseField(score!, '  ')).toEqual({ skip: true });
    expect(parseField(subscribe!, '')).toEqual({ error: 'subscribe is required.' });
  });

  it('takes a JSON object line as the whole answer, and nothing else', () => {
    expect(jsonAnswer(' {"name": "Ada", "subscribe": true} ')).toEqual({ name: 'Ada', subscribe: true });
    expect(jsonAnswer('{not json')).toBeUndefined();
    expect(jsonAnswer('Ada')).toBeUndefined();
  });
});
