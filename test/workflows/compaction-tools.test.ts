import { describe, expect, it } from 'vitest';
import type { ScriptFunction } from '../../src/testing/scripted-model/index.js';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import { askUpdate, transcriptQuery } from '../../src/workflows/definitions.js';
import type { TurnResult } from '../../src/workflows/turn-result.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { expectValidToolPairing } from '../helpers/transcript.js';

/**
 * Compaction in turns that call tools (docs/models.md#compaction): each turn looks a user up and reads a company; the
 * summaries never part a tool call from its result in what the model is sent, and the system prompt stays first.
 */

const bed = useTimeSkippingWithCrm();

/** Two tool rounds, then an answer; summary requests get a short summary of their own. */
const toolModel: ScriptFunction = (request) => {
  const messages = request.messages;
  const last = messages.at(-1);
  if (last?.role === 'user') return { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada Lovelace' } }] };
  const toolRounds = messages.slice(messages.findLastIndex((message) => message.role === 'user'));
  const rounds = toolRounds.filter((message) => message.role === 'tool').length;
  if (rounds === 1) return { toolCalls: [{ name: 'crm__get_company', arguments: { companyId: 'c-9' } }] };
  return { content: 'Ada Lovelace works at Analytical Engines Ltd in London, as before. '.repeat(4) };
};

describe('compaction with tool calls', () => {
  it('keeps every tool call with its result and the system prompt first, turn after turn past the window', async () => {
    const model = await startScriptedModel({ script: toolModel, contextWindow: 3_000, summaries: 'user-lines' });
    bed.onCleanup(() => model.close());
    const agent = await bed.agentWith(undefined, { model });
    const handle = await agent.startConversation('compaction-tools', {
      settings: { systemPrompt: 'You look people up in the CRM.', contextWindow: 3_000 },
    });
    const results: TurnResult[] = [];
    for (let turn = 1; turn <= 10; turn++) {
      const content = `Request ${turn}: where does Ada Lovelace work? ${'Please check it again carefully. '.repeat(8)}`;
      results.push(await handle.executeUpdate(askUpdate, { args: [{ id: `t${turn}`, content }] }));
    }

    expect(results.map((result) => [result.stopReason, result.toolCalls])).toEqual(Array(10).fill(['completed', 2]));
    expect(results.some((result) => (result.compaction?.summaries ?? 0) > 0)).toBe(true);
    const turnRequests = model.requests.filter((request) => !request.idempotencyKey?.includes('/compaction-'));
    // The estimate counts fewer tokens than this wire format has (tool definitions, call structures): one refusal,
    // which compacted and taught the window; none after it.
    expect(model.requests.filter((request) => request.status === 400)).toHaveLength(1);
    for (const request of turnRequests) {
      expectValidToolPairing(request.messages);
      expect(request.messages[0]).toEqual({ role: 'system', content: 'You look people up in the CRM.' });
    }
    // After the first summary, what the model is sent holds it second and no longer holds the first request.
    const page = await handle.query(transcriptQuery, { from: 0, limit: 1000 });
    const firstSummary = page.messages.findIndex((message) => message.role === 'system' && message.compaction);
    expect(firstSummary).toBeGreaterThan(0);
    const after = turnRequests.at(-1)!.messages;
    expect(after[1]?.role).toBe('system');
    expect(JSON.stringify(after.slice(2))).not.toContain('Request 1:');
    expect(JSON.stringify(after[1])).toContain('Request 1:');
  });
});
