import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { TranscriptCache, type TranscriptSource } from '../../src/worker/activities/model/transcript-cache.js';
import { chainDigest, EMPTY_DIGEST } from '../../src/shared/digest.js';
import { FailureType } from '../../src/shared/errors.js';
import type { ChatMessage, ModelCallInput, ModelContextPage, ToolDefinition } from '../../src/shared/types.js';
import { Transcript } from '../../src/workflows/transcript.js';
import { modelCallInput } from '../helpers/model-call.js';

/** Stands in for the workflow's `modelContext` query: serves pages of one transcript per run and counts calls. */
class FakeSource implements TranscriptSource {
  readonly calls: { run: string; from: number; limit: number }[] = [];
  readonly transcripts = new Map<string, ChatMessage[]>();
  tools: ToolDefinition[] | undefined = undefined;
  /** The digest the workflow reports for its tools; by default the digest of `tools`. */
  reportedToolsDigest: string | undefined | null = null;

  async page(workflowId: string, runId: string, from: number, limit: number): Promise<ModelContextPage> {
    const run = `${workflowId}/${runId}`;
    this.calls.push({ run, from, limit });
    const messages = this.transcripts.get(run) ?? [];
    return {
      from,
      messages: messages.slice(from, from + limit),
      total: messages.length,
      tools: this.tools,
      toolsDigest:
        this.reportedToolsDigest !== null ? this.reportedToolsDigest : this.tools && digestOfTools(this.tools),
    };
  }
}

const digestOfTools = (tools: ToolDefinition[]) => chainDigest(EMPTY_DIGEST, tools);

function tool(name: string): ToolDefinition {
  return {
    name,
    description: `The ${name} tool.`,
    inputSchema: { type: 'object' },
    annotations: {},
    server: 'files',
    originalName: name,
    timeoutMs: 10_000,
  };
}

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

/** A workflow run's transcript, and the model call inputs it would send. */
class Run {
  readonly transcript: Transcript;
  round = 0;

  constructor(
    readonly workflowId: string,
    readonly runId: string,
    messages: ChatMessage[],
    readonly source: FakeSource,
  ) {
    this.transcript = new Transcript(messages);
    this.publish();
  }

  /** What the workflow's query answers from. */
  publish(): void {
    this.source.transcripts.set(`${this.workflowId}/${this.runId}`, [...this.transcript.messages]);
  }

  append(...messages: ChatMessage[]): void {
    this.transcript.append(...messages);
    this.publish();
  }

  /** The next model call's input, naming the shared prefix as the workflow does. */
  input(toolsDigest?: string): ModelCallInput {
    const { prefix, newMessages } = this.transcript.nextModelInput();
    return modelCallInput([], {
      workflowId: this.workflowId,
      runId: this.runId,
      round: ++this.round,
      prefix,
      newMessages,
      toolsDigest,
    });
  }

  /** The model answered: the workflow records the answer and the worker that made the call holds it all. */
  answered(answer: ChatMessage): void {
    this.append(answer);
    this.transcript.markShared(this.transcript.length);
  }
}

function history(length: number): ChatMessage[] {
  return Array.from({ length }, (_, index) => (index % 2 === 0 ? user(`q${index}`) : assistant(`a${index}`)));
}

async function rejection(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(error)}`);
  return error;
}

describe('TranscriptCache: hits and misses', () => {
  it('transcript cache: after remember(), the next round names the prefix the worker holds and is a hit', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', [user('What is in /tmp?')], source);

    const first = run.input();
    await cache.resolve(first);
    const toolCall: ChatMessage = {
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'c1', name: 'files__list', arguments: '{}' }],
    };
    cache.remember(first, toolCall);
    run.answered(toolCall);
    const result: ChatMessage = {
      role: 'tool',
      toolCallId: 'c1',
      name: 'files__list',
      content: 'a.txt',
      outcome: 'ok',
    };
    run.append(result);
    const callsBefore = source.calls.length;

    const second = run.input();
    const resolved = await cache.resolve(second);

    expect(second.prefix.count).toBe(2);
    expect(second.newMessages).toEqual([result]);
    expect(resolved.messages).toEqual(run.transcript.messages);
    expect(resolved.tools).toEqual([]);
    expect(source.calls.length).toBe(callsBefore);
    expect(cache.stats.hits).toBe(1);
  });

  it('transcript cache: a miss fetches the prefix in pages of pageSize and returns it with the new messages', async () => {
    const source = new FakeSource();
    const run = new Run('wf-1', 'run-1', history(7), source);
    run.transcript.markShared(7);
    run.append(user('and now?'));
    const cache = new TranscriptCache(source, { pageSize: 3 });

    const resolved = await cache.resolve(run.input());

    expect(source.calls).toEqual([
      { run: 'wf-1/run-1', from: 0, limit: 3 },
      { run: 'wf-1/run-1', from: 3, limit: 3 },
      { run: 'wf-1/run-1', from: 6, limit: 1 },
    ]);
    expect(resolved.messages).toEqual(run.transcript.messages);
    expect(cache.stats).toEqual({ hits: 0, misses: 1, pagesFetched: 3, heldToolResults: 0 });
  });

  it('transcript cache: a miss that gets more messages than the prefix keeps only the prefix', async () => {
    const source = new FakeSource();
    const run = new Run('wf-1', 'run-1', history(4), source);
    run.transcript.markShared(4);
    run.append(user('new question'));
    // The workflow has moved on since this call was scheduled: its query answers with more messages.
    source.transcripts.set('wf-1/run-1', [...run.transcript.messages, assistant('later')]);
    const cache = new TranscriptCache(source, { pageSize: 10 });

    const resolved = await cache.resolve(run.input());

    expect(resolved.messages).toEqual(run.transcript.messages);
  });

  it('transcript cache: a prefix whose digest does not match is a retryable TranscriptUnavailable', async () => {
    const source = new FakeSource();
    const run = new Run('wf-1', 'run-1', history(4), source);
    run.transcript.markShared(4);
    source.transcripts.set('wf-1/run-1', [...history(3), assistant('edited')]);
    const cache = new TranscriptCache(source);

    const failure = await rejection(cache.resolve(run.input()));

    expect(failure.type).toBe(FailureType.TranscriptUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe(
      'The worker could not rebuild the transcript: the digest of the first 4 messages does not match ' +
        '(the transcript changed?). Retrying.',
    );
    expect(cache.size).toBe(0);
  });

  it('transcript cache: a workflow with fewer messages than the prefix names is a retryable TranscriptUnavailable', async () => {
    const source = new FakeSource();
    const run = new Run('wf-1', 'run-1', history(5), source);
    run.transcript.markShared(5);
    source.transcripts.set('wf-1/run-1', history(2));
    const cache = new TranscriptCache(source, { pageSize: 2 });

    const failure = await rejection(cache.resolve(run.input()));

    expect(failure.type).toBe(FailureType.TranscriptUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('the workflow has 2 messages, fewer than the 5 this call names');
  });

  it('transcript cache: a cached copy that differs from the named prefix is refetched, not trusted', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', history(2), source);
    const first = run.input();
    await cache.resolve(first);
    cache.remember(first, assistant('an answer the workflow never recorded'));
    run.answered(assistant('the answer the workflow recorded'));
    run.append(user('next'));
    const callsBefore = source.calls.length;

    const resolved = await cache.resolve(run.input());

    expect(resolved.messages).toEqual(run.transcript.messages);
    expect(source.calls.length).toBeGreaterThan(callsBefore);
    expect(cache.stats.misses).toBe(2);
  });

  it('transcript cache: remember() for a call the cache no longer matches adds nothing', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', history(2), source);
    const stale = run.input();
    await cache.resolve(stale);
    // Another input for the same run (e.g. a later round on this worker) replaced the cached transcript.
    await cache.resolve({ ...stale, newMessages: [...stale.newMessages, user('more')] });

    cache.remember(stale, assistant('late answer'));
    run.answered(assistant('late answer'));
    run.append(user('next'));
    const resolved = await cache.resolve(run.input());

    expect(cache.stats.misses).toBe(2);
    expect(resolved.messages).toEqual(run.transcript.messages);
  });
});

describe('TranscriptCache: a prefix longer than the cached copy', () => {
  it('transcript cache: messages too large to send with the input are read by query, only those', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', [user('read the log')], source);
    const first = run.input();
    await cache.resolve(first);
    const call: ChatMessage = {
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'c1', name: 'files__read', arguments: '{}' }],
    };
    cache.remember(first, call);
    run.answered(call);
    run.append({ role: 'tool', toolCallId: 'c1', name: 'files__read', content: 'x'.repeat(600_000), outcome: 'ok' });
    const callsBefore = source.calls.length;

    const second = run.input();
    const resolved = await cache.resolve(second);

    expect(second.newMessages).toEqual([]);
    expect(resolved.messages).toEqual(run.transcript.messages);
    expect(source.calls.slice(callsBefore)).toEqual([{ run: 'wf-1/run-1', from: 2, limit: 1 }]);
  });

  it('transcript cache: a cached copy that the longer prefix does not continue is refetched whole', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', history(2), source);
    const first = run.input();
    await cache.resolve(first);
    cache.remember(first, assistant('an answer the workflow never recorded'));
    run.answered(assistant('the answer the workflow recorded'));
    run.append(user('next'));
    run.transcript.markShared(run.transcript.length);
    run.append(user('and more'));
    const callsBefore = source.calls.length;

    const resolved = await cache.resolve(run.input());

    expect(resolved.messages).toEqual(run.transcript.messages);
    expect(source.calls.slice(callsBefore).map((call) => call.from)).toEqual([3, 0]);
  });
});

describe('TranscriptCache: retries', () => {
  it('transcript cache: a retry of the same round (prefix shorter than cached) truncates and resends exactly that input', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', [user('q1')], source);
    const first = run.input();
    await cache.resolve(first);
    cache.remember(first, assistant('a1'));
    run.answered(assistant('a1'));
    run.append(user('q2'));
    const second = run.input();
    await cache.resolve(second);
    // The first attempt's answer reached the cache, but the activity failed before the workflow recorded it.
    cache.remember(second, assistant('a2, lost'));
    const callsBefore = source.calls.length;

    const retried = await cache.resolve(second);

    expect(retried.messages).toEqual([user('q1'), assistant('a1'), user('q2')]);
    expect(source.calls.length).toBe(callsBefore);
    expect(cache.stats.hits).toBe(2);

    // The retry's answer is remembered and the next round is a hit again.
    cache.remember(second, assistant('a2'));
    run.answered(assistant('a2'));
    run.append(user('q3'));
    const third = await cache.resolve(run.input());
    expect(third.messages).toEqual(run.transcript.messages);
    expect(cache.stats.hits).toBe(3);
    expect(source.calls.length).toBe(callsBefore);
  });
});

describe('TranscriptCache: tools', () => {
  it('transcript cache: a turn without tools gets an empty tool list and no query for tools', async () => {
    const source = new FakeSource();
    source.tools = [tool('files__read')];
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', [user('hi')], source);

    const resolved = await cache.resolve(run.input(undefined));

    expect(resolved.tools).toEqual([]);
    expect(source.calls).toEqual([]);
  });

  it('transcript cache: tools are fetched once per digest, checked against it, and then served from the cache', async () => {
    const source = new FakeSource();
    const tools = [tool('files__read'), tool('files__write')];
    source.tools = tools;
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', [user('hi')], source);

    const first = run.input(digestOfTools(tools));
    const resolved = await cache.resolve(first);
    expect(resolved.tools).toEqual(tools);
    expect(source.calls).toEqual([{ run: 'wf-1/run-1', from: 1, limit: 0 }]);

    cache.remember(first, assistant('a'));
    run.answered(assistant('a'));
    run.append(user('again'));
    const again = await cache.resolve(run.input(digestOfTools(tools)));

    expect(again.tools).toEqual(tools);
    expect(source.calls).toHaveLength(1);
  });

  it('transcript cache: on a miss the tools come with the first page of the prefix, without another query', async () => {
    const source = new FakeSource();
    const tools = [tool('files__read')];
    source.tools = tools;
    const run = new Run('wf-1', 'run-1', history(3), source);
    run.transcript.markShared(3);
    const cache = new TranscriptCache(source);

    const resolved = await cache.resolve(run.input(digestOfTools(tools)));

    expect(resolved.tools).toEqual(tools);
    expect(source.calls).toEqual([{ run: 'wf-1/run-1', from: 0, limit: 3 }]);
  });

  it('transcript cache: a new tool digest in the next turn fetches the new tools', async () => {
    const source = new FakeSource();
    const before = [tool('files__read')];
    const after = [tool('files__read'), tool('memory__search')];
    source.tools = before;
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', [user('hi')], source);
    const first = run.input(digestOfTools(before));
    await cache.resolve(first);
    cache.remember(first, assistant('a'));
    run.answered(assistant('a'));
    run.append(user('next turn'));
    source.tools = after;

    const resolved = await cache.resolve(run.input(digestOfTools(after)));

    expect(resolved.tools).toEqual(after);
    expect(source.calls).toHaveLength(2);
  });

  it('transcript cache: tools that do not match the named digest are a retryable TranscriptUnavailable', async () => {
    const source = new FakeSource();
    source.tools = [tool('files__read')];
    const cache = new TranscriptCache(source);
    const run = new Run('wf-1', 'run-1', [user('hi')], source);

    const failure = await rejection(cache.resolve(run.input(digestOfTools([tool('files__delete')]))));

    expect(failure.type).toBe(FailureType.TranscriptUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain("the workflow's current tool list is not the one this call names");
  });

  it('transcript cache: tools whose reported digest lies are caught by recomputing it', async () => {
    const source = new FakeSource();
    const named = [tool('files__read')];
    source.tools = [tool('files__delete')];
    source.reportedToolsDigest = digestOfTools(named);
    const run = new Run('wf-1', 'run-1', history(2), source);
    run.transcript.markShared(2);
    const cache = new TranscriptCache(source);

    const failure = await rejection(cache.resolve(run.input(digestOfTools(named))));

    expect(failure.type).toBe(FailureType.TranscriptUnavailable);
  });
});

describe('TranscriptCache: eviction', () => {
  async function cacheRun(cache: TranscriptCache, run: Run): Promise<void> {
    const input = run.input();
    await cache.resolve(input);
    cache.remember(input, assistant('ok'));
    run.answered(assistant('ok'));
    run.append(user('next'));
  }

  it('transcript cache: keeps at most maxRuns runs, dropping the least recently used', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source, { maxRuns: 2 });
    const [a, b, c] = ['a', 'b', 'c'].map((id) => new Run(`wf-${id}`, 'run-1', [user(`hi ${id}`)], source));
    await cacheRun(cache, a!);
    await cacheRun(cache, b!);
    // Using a again makes b the least recently used.
    await cacheRun(cache, a!);
    await cacheRun(cache, c!);
    expect(cache.size).toBe(2);
    source.calls.length = 0;

    await cache.resolve(a!.input());
    expect(source.calls).toEqual([]);
    await cache.resolve(c!.input());
    expect(source.calls).toEqual([]);
    await cache.resolve(b!.input());
    expect(source.calls.map((call) => call.run)).toEqual(['wf-b/run-1']);
  });

  it('transcript cache: keeps at most maxChars characters of content, dropping the least recently used run', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source, { maxChars: 100 });
    const a = new Run('wf-a', 'run-1', [user('a'.repeat(60))], source);
    const b = new Run('wf-b', 'run-1', [user('b'.repeat(30))], source);
    await cache.resolve(a.input());
    await cache.resolve(b.input());
    expect(cache.size).toBe(2);

    const c = new Run('wf-c', 'run-1', [user('c'.repeat(30))], source);
    await cache.resolve(c.input());

    expect(cache.size).toBe(2);
    a.transcript.markShared(1);
    a.append(user('again'));
    source.calls.length = 0;
    await cache.resolve(a.input());
    expect(source.calls.map((call) => call.run)).toEqual(['wf-a/run-1']);
  });

  it('transcript cache: the run being resolved is kept even when it alone is over maxChars', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source, { maxChars: 10 });
    const run = new Run('wf-big', 'run-1', [user('x'.repeat(50))], source);
    const first = run.input();
    await cache.resolve(first);
    cache.remember(first, assistant('y'.repeat(50)));
    run.answered(assistant('y'.repeat(50)));
    run.append(user('next'));

    await cache.resolve(run.input());

    expect(cache.size).toBe(1);
    expect(source.calls).toEqual([]);
    expect(cache.stats.hits).toBe(1);
  });

  it('transcript cache: clear() forgets every run', async () => {
    const source = new FakeSource();
    const cache = new TranscriptCache(source);
    await cache.resolve(new Run('wf-a', 'run-1', [user('hi')], source).input());

    cache.clear();

    expect(cache.size).toBe(0);
  });
});
