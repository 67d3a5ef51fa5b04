import { expect, it } from 'vitest';
import { prepareToolCall } from '../../src/workflows/tool-calls.js';

it('tool calls: JSON null arguments are rejected, naming null (not "object")', () => {
  const tools = new Map([['memory__search', { name: 'memory__search' } as never]]);
  const prepared = prepareToolCall({ id: 'call_1', name: 'memory__search', arguments: 'null' }, tools);
  expect(prepared.kind === 'reject' && prepared.message.content).toBe(
    'Error: the arguments for memory__search must be a JSON object, not null.',
  );
});
