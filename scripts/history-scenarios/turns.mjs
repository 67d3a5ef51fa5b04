// Turns and how they end: answered, with tools, interrupted, each budget limit, a model error, continue-as-new,
// streamed to a subscriber, ended. Every scenario records whole runs (state `finished`).
import { endSignal, interruptSignal, pollEventsUpdate, userMessageSignal } from '../../dist/workflows/definitions.js';
import { answerQueued, ask, call, endAndRecord, idleAfter, statusWhen } from './drive.mjs';

/** A one-message conversation with these settings that closes when it has answered. */
const answerOnce = (context, content, settings) => answerQueued(context, [content], settings);

/** A final answer after a budget stop, for the scripts below. */
const finalAnswer = { content: 'The budget ran out; here is what I have.' };

export const turnScenarios = {
  'plain-turn': {
    description: 'an `ask` update answered without tools, then `end`',
    script: [{ content: 'Hello! How can I help?' }],
    async run(context) {
      const handle = await context.start({ settings: { systemPrompt: 'Be brief.' } });
      await ask(handle, 'm-1', 'Hi');
      await endAndRecord(context, handle);
    },
  },
  'parallel-tools': {
    description: 'three tool calls in one round (echo, set_value, slow), then increment, then the answer',
    script: [
      {
        toolCalls: [
          call('echo', { text: 'first' }),
          call('set_value', { key: 'colour', value: 'blue' }),
          call('slow', { delayMs: 300 }),
        ],
      },
      { toolCalls: [call('increment', { key: 'visits' })] },
      { content: 'Echoed, stored, waited and counted.' },
    ],
    run: (context) => answerOnce(context, 'Do three things at once, then count.'),
  },
  interrupt: {
    description: '`interrupt` while a tool call hangs; the cancelled turn, then a new `ask`, then `end`',
    script: [{ toolCalls: [call('hang')] }, { content: 'Something else, then.' }],
    async run(context) {
      const handle = await context.start({});
      await handle.signal(userMessageSignal, { id: 'm-1', content: 'Do the slow thing.' });
      await statusWhen(handle, 'the hanging tool call', (status) => status.currentTurn?.activity.startsWith('tools'));
      await handle.signal(interruptSignal, { reason: 'changed my mind' });
      await statusWhen(handle, 'the interrupted turn', idleAfter(1));
      await ask(handle, 'm-2', 'Something else.');
      await endAndRecord(context, handle);
    },
  },
  'budget-rounds': {
    description: '`maxRounds: 2` reached; the final-answer call with tools disabled',
    script: [
      { toolCalls: [call('echo', { text: 'one' })] },
      { toolCalls: [call('echo', { text: 'two' })] },
      finalAnswer,
    ],
    run: (context) => answerOnce(context, 'Keep echoing.', { budget: { maxRounds: 2 } }),
  },
  'budget-tool-calls': {
    description: '`maxToolCalls: 1` with two calls asked for: one runs, one is answered as over budget; final answer',
    script: [{ toolCalls: [call('echo', { text: 'one' }), call('echo', { text: 'two' })] }, finalAnswer],
    run: (context) => answerOnce(context, 'Echo twice.', { budget: { maxToolCalls: 1 } }),
  },
  'budget-tokens': {
    description: '`maxTokens: 100` spent by the first model call (120 tokens); final answer',
    script: [
      { toolCalls: [call('echo', { text: 'costly' })], usage: { prompt_tokens: 80, completion_tokens: 40 } },
      { ...finalAnswer, usage: { prompt_tokens: 90, completion_tokens: 10 } },
    ],
    run: (context) => answerOnce(context, 'Spend tokens.', { budget: { maxTokens: 100 } }),
  },
  'budget-time': {
    description: '`maxDurationMs: 1000` fires while a 5 s tool call runs: the call is cancelled; final answer',
    script: [{ toolCalls: [call('slow', { delayMs: 5000 })] }, finalAnswer],
    run: (context) => answerOnce(context, 'Take your time.', { budget: { maxDurationMs: 1000 } }),
  },
  'model-error': {
    description: 'the model answers 400 (not retried): the turn ends with the error; the next `ask` is answered',
    script: [{ error: { status: 400 } }, { content: 'Working again.' }],
    async run(context) {
      const handle = await context.start({});
      await ask(handle, 'm-1', 'Fail.');
      await ask(handle, 'm-2', 'Again.');
      await endAndRecord(context, handle);
    },
  },
  'model-retried': {
    description: 'the model answers 503 once: the model activity is retried and its second attempt answers',
    script: [{ error: { status: 503 } }, { content: 'Second attempt.' }],
    run: (context) => answerOnce(context, 'Retry me.'),
  },
  'continue-as-new': {
    description: '`maxTurnsPerRun: 1` with two queued messages: two runs linked by continue-as-new',
    script: [{ toolCalls: [call('echo', { text: 'carried' })] }, { content: 'answer one' }, { content: 'answer two' }],
    run: (context) => answerQueued(context, ['one', 'two'], { maxTurnsPerRun: 1 }),
  },
  'ask-rolling-over': {
    description:
      'an `ask` taken during the last turn of a run fails as ConversationRollingOver at the handover; the client asks the next run',
    script: [{ content: 'answer one', delayMs: 1500 }, { content: 'answer two' }],
    async run(context) {
      const handle = await context.start({ settings: { maxTurnsPerRun: 1 } });
      await handle.signal(userMessageSignal, { id: 'm-1', content: 'one' });
      await statusWhen(handle, 'the first turn', (status) => status.phase === 'running');
      // The client retries a rolled-over ask on the new run, with the same message id.
      await context.client.ask(context.id, 'two', { messageId: 'm-2' });
      await context.client.end(context.id);
      await context.handle().result();
      context.record(handle.firstExecutionRunId);
    },
  },
  'streamed-turn': {
    description: 'a streamed answer (several `stream` signals) read by a subscriber through `pollEvents` long polls',
    script: [
      { content: 'A streamed answer, written a few words at a time so that it takes a while.', chunkDelayMs: 120 },
    ],
    async run(context) {
      const handle = await context.start({});
      const events = [];
      const subscriber = (async () => {
        let from = 0;
        while (!events.some((event) => event.type === 'turn_finished')) {
          const page = await handle.executeUpdate(pollEventsUpdate, { args: [{ from, waitMs: 10_000 }] });
          events.push(...page.events);
          from = page.next;
        }
      })();
      await handle.signal(userMessageSignal, { id: 'm-1', content: 'Stream me an answer.' });
      await subscriber;
      if (!events.some((event) => event.type === 'text_delta')) throw new Error('the subscriber got no text_delta');
      await endAndRecord(context, handle);
    },
  },
  'unstreamed-turn': {
    description: '`stream: false`: the model call is not streamed and no `stream` signal is sent',
    script: [{ toolCalls: [call('echo', { text: 'quiet' })] }, { content: 'Not streamed.' }],
    run: (context) => answerOnce(context, 'Answer without streaming.', { stream: false }),
  },
  ended: {
    description: '`end` during a turn: the turn finishes, a message after the end is ignored, the run closes `ended`',
    script: [{ content: 'Last answer.', delayMs: 1500 }],
    async run(context) {
      const handle = await context.start({});
      await handle.signal(userMessageSignal, { id: 'm-1', content: 'One last thing.' });
      await statusWhen(handle, 'the turn', (status) => status.phase === 'running');
      await handle.signal(endSignal, { reason: 'done for today' });
      await handle.signal(userMessageSignal, { id: 'm-2', content: 'Too late.' });
      const outcome = await handle.result();
      if (outcome.closedBecause !== 'ended') throw new Error(`closed ${outcome.closedBecause}, not ended`);
      context.record(handle.firstExecutionRunId);
    },
  },
};
