import readline from 'node:readline';
import { PassThrough } from 'node:stream';
import { setImmediate as nextTick } from 'node:timers/promises';
import { expect, it } from 'vitest';
import type { DurableAgentClient } from '../../src/client/index.js';
import { ChatQuestions } from '../../src/cli/chat/questions.js';
import { Spinner } from '../../src/cli/chat/spinner.js';
import type { StreamEvent } from '../../src/workflows/stream-events.js';

/*
 * The chat asks an approval and a server's question of one round one after the other. The next question comes after
 * the line that shows the first one settled (`✓ … approved by …`), which the conversation's stream brings: the call
 * that sent the answer returns first, and a stream that lags must not put the next question above that line.
 */

const approval = {
  type: 'approval_requested',
  callId: 'call-1',
  turn: 1,
  tool: 'test__set_value',
  server: 'test',
  arguments: { key: 'mood' },
  reason: 'requireApproval',
  requestedAt: new Date(0).toISOString(),
} as unknown as StreamEvent;
const question = {
  type: 'input_requested',
  requestId: 'call-2:1:1',
  callId: 'call-2',
  turn: 1,
  tool: 'test__ask_user',
  server: 'test',
  message: 'Who are you?',
  mode: 'form',
  requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] },
  requestedAt: new Date(0).toISOString(),
} as unknown as StreamEvent;

it('chat: the question after an approval answered here is asked once the stream shows the approval decided', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const rl = readline.createInterface({ input, output, terminal: false });
  const decisions: string[] = [];
  // What the chat calls to decide: it answers at once, as Temporal does, before the stream shows the decision.
  const client = {
    approve: async (_conversationId: string, callId: string) => void decisions.push(callId),
  } as unknown as DurableAgentClient;
  const questions = new ChatQuestions({
    client,
    conversationId: 'order',
    rl,
    output,
    spinner: new Spinner(output as unknown as NodeJS.WriteStream),
    errors: output,
    interactive: true,
    by: 'tester',
    prompt: 'you> ',
    done: () => undefined,
  });
  const write = (line: string) => () => output.write(`${line}\n`);
  try {
    questions.show(approval, write('tool call waits'), () => undefined);
    questions.show(question, write('server asks'), () => undefined);
    await nextTick();
    expect(shown).toContain('Allow test__set_value');
    expect(questions.answer('y')).toBe(true);
    for (let tick = 0; tick < 20; tick++) await nextTick();
    expect(decisions).toEqual(['call-1']);
    // Decided, but the stream has not shown it yet: the server's question waits.
    expect(shown).not.toContain('Name');
    const decided = { type: 'approval_decided', callId: 'call-1', turn: 1, decision: 'approved', by: 'tester' };
    questions.show(decided as unknown as StreamEvent, write('✓ test__set_value approved by tester'), () => undefined);
    await expect.poll(() => shown).toContain('Name');
    expect(shown.indexOf('Name')).toBeGreaterThan(shown.indexOf('✓ test__set_value approved by tester'));
  } finally {
    questions.close();
    rl.close();
  }
});
