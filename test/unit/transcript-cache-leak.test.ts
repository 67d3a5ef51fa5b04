import { expect, it } from 'vitest';
import { TranscriptCache, type TranscriptSource } from '../../src/worker/activities/model/transcript-cache.js';
import type { ChatMessage, ModelCallInput, ModelContextPage } from '../../src/shared/types.js';
import { modelCallInput } from '../helpers/model-call.js';

it('transcript cache: a failed fetch does not count its partial pages against maxChars', async () => {
  const transcripts = new Map<string, ChatMessage[]>();
  const calls: string[] = [];
  const source: TranscriptSource = {
    async page(workflowId, _runId, from, limit): Promise<ModelContextPage> {
      calls.push(workflowId);
      const messages = transcripts.get(workflowId) ?? [];
      return {
        from,
        messages: messages.slice(from, from + limit),
        total: messages.length,
        tools: undefined,
        toolsDigest: undefined,
      };
    },
  };
  const input = (workflowId: string, prefix: ChatMessage[], newMessages: ChatMessage[]): ModelCallInput =>
    modelCallInput(prefix, { workflowId, runId: 'r', newMessages });
  const cache = new TranscriptCache(source, { maxChars: 100, pageSize: 1 });

  // The workflow has 1 message of 40 chars but the call names 2: the first page is appended, then the fetch throws.
  const named: ChatMessage[] = [
    { role: 'user', content: 'a'.repeat(40) },
    { role: 'assistant', content: 'b' },
  ];
  transcripts.set('wf-a', named.slice(0, 1));
  await expect(cache.resolve(input('wf-a', named, []))).rejects.toThrow(/fewer than the 2/);

  // Two real runs of 50 + 30 = 80 characters fit in 100: both should stay cached.
  await cache.resolve(input('wf-b', [], [{ role: 'user', content: 'b'.repeat(50) }]));
  await cache.resolve(input('wf-c', [], [{ role: 'user', content: 'c'.repeat(30) }]));
  expect(cache.size).toBe(2);
});
