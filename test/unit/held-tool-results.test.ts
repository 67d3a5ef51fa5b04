import { describe, expect, it } from 'vitest';
import { TranscriptCache, type TranscriptSource } from '../../src/worker/activities/model/transcript-cache.js';
import { RecentToolResults } from '../../src/worker/activities/tool-calls/recent-results.js';
import { toolResultMessage } from '../../src/shared/tool-messages.js';
import type { ChatMessage, ModelContextPage } from '../../src/shared/types.js';
import { Transcript } from '../../src/workflows/transcript.js';
import { modelCallInput } from '../helpers/model-call.js';

/** The workflow's `modelContext` query over `transcript`, counting what it was asked. */
function querySource(transcript: Transcript): TranscriptSource & { asked: { from: number; limit: number }[] } {
  const asked: { from: number; limit: number }[] = [];
  return {
    asked,
    page: async (_workflowId, _runId, from, limit): Promise<ModelContextPage> => {
      asked.push({ from, limit });
      return {
        from,
        messages: transcript.messages.slice(from, from + limit),
        total: transcript.length,
        tools: undefined,
        toolsDigest: undefined,
      };
    },
  };
}

const RUN = 'wf-1/run-1';
const calls = ['c1', 'c2', 'c3'].map((id) => ({ id, name: 'files__read', arguments: `{"path":"${id}"}` }));
const asking: ChatMessage = { role: 'assistant', content: null, toolCalls: calls };
const resultOf = (id: string) => ({
  outcome: 'ok' as const,
  content: `contents of ${id} `.repeat(100),
  truncated: false,
});

/**
 * A turn's first round on one worker: the model asked for three calls, the worker ran `ranHere` of them and kept their
 * results, and the workflow appended all three messages (`appended`, by default as the calls returned them).
 */
async function secondRound(ranHere: string[], appended?: ChatMessage[]) {
  const transcript = new Transcript([{ role: 'user', content: 'read them' }]);
  const source = querySource(transcript);
  const results = new RecentToolResults();
  const cache = new TranscriptCache(source, {}, results);
  const input = (round: number) => {
    const { prefix, newMessages } = transcript.nextModelInput();
    return modelCallInput([], { workflowId: 'wf-1', runId: 'run-1', round, prefix, newMessages });
  };
  const first = input(1);
  await cache.resolve(first);
  cache.remember(first, asking);
  transcript.append(asking);
  transcript.markShared(transcript.length);
  for (const call of calls.filter((call) => ranHere.includes(call.id))) {
    results.remember(RUN, { toolCallId: call.id, tool: { name: call.name } as never }, resultOf(call.id));
  }
  transcript.append(...(appended ?? calls.map((call) => toolResultMessage(call, resultOf(call.id)))));
  transcript.markRecorded(transcript.length);
  source.asked.length = 0;
  const second = input(2);
  return { second, resolved: await cache.resolve(second), transcript, source, cache, results };
}

describe('a round of tool results, named by the next model call', () => {
  it('held tool results: the worker that ran every call takes their results from itself and asks the workflow nothing', async () => {
    const { second, resolved, transcript, source, cache, results } = await secondRound(['c1', 'c2', 'c3']);

    expect(second.newMessages).toEqual([]);
    expect(second.prefix.count).toBe(5);
    expect(resolved.messages).toEqual(transcript.messages);
    expect(source.asked).toEqual([]);
    expect(cache.stats.heldToolResults).toBe(3);
    // The cache holds them now: the process keeps no second copy.
    expect(results.size).toBe(0);
  });

  it('held tool results: a call another worker ran is read by query, that one alone', async () => {
    const { resolved, transcript, source, cache } = await secondRound(['c1', 'c3']);

    expect(resolved.messages).toEqual(transcript.messages);
    expect(source.asked).toEqual([{ from: 3, limit: 1 }]);
    expect(cache.stats.heldToolResults).toBe(2);
  });

  it('held tool results: a message the workflow changed fails the digest and the round is read by query instead', async () => {
    const appended = calls.map((call) => toolResultMessage(call, resultOf(call.id)));
    // As for a person's edited arguments: a note before the result.
    appended[1] = { ...appended[1]!, content: `[edited] ${appended[1]!.content}` };
    const { resolved, transcript, source } = await secondRound(['c1', 'c2', 'c3'], appended);

    expect(resolved.messages).toEqual(transcript.messages);
    expect(source.asked).toEqual([{ from: 2, limit: 3 }]);
  });

  it('held tool results: at most maxChars characters are kept, the oldest dropped first', () => {
    const results = new RecentToolResults({ maxChars: 3_000 });
    for (const call of calls) {
      results.remember(RUN, { toolCallId: call.id, tool: { name: call.name } as never }, resultOf(call.id));
    }

    expect(results.get(RUN, 'c1')).toBeUndefined();
    expect(results.get(RUN, 'c3')?.content).toBe(resultOf('c3').content);
    expect(results.size).toBe(2);
  });
});
