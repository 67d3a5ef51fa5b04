import { describe, expect, it } from 'vitest';
import * as definitions from '../../src/workflows/definitions.js';
import { loadCorpus, releases } from './release-corpus.js';

/**
 * Every signal and update the conversation workflow defines (src/workflows/definitions.ts) is delivered in at least
 * one history of the newest release's corpus, so the replay test replays its handler. A new handler fails here until
 * a history that uses it is recorded (scripts/record-histories.mjs, under the next version). Queries leave no event in
 * history (they are answered without a workflow task that records anything), so they are not counted.
 */

interface HandlerDefinition {
  type: 'signal' | 'update' | 'query';
  name: string;
}

const isHandler = (value: unknown): value is HandlerDefinition =>
  typeof value === 'object' &&
  value !== null &&
  ['signal', 'update', 'query'].includes((value as { type?: unknown }).type as string) &&
  typeof (value as { name?: unknown }).name === 'string';

const handlers = (Object.values(definitions) as unknown[]).filter(isHandler);
const recordedHandlers = handlers.filter((handler) => handler.type !== 'query');

describe("handlers in the newest release's corpus", () => {
  it('finds the handlers definitions.ts exports (signals, updates and queries)', () => {
    expect(handlers.map((handler) => `${handler.type} ${handler.name}`).sort()).toEqual(
      expect.arrayContaining([
        'query status',
        'signal end',
        'signal interrupt',
        'signal stream',
        'signal userMessage',
        'update answerInput',
        'update approve',
        'update ask',
        'update deny',
        'update pollEvents',
        'update requestInput',
      ]),
    );
  });

  it('every signal and update appears in at least one history (a signal event, or an update accepted)', () => {
    const newest = releases().at(-1)!;
    const seen = new Set<string>();
    for (const { history } of loadCorpus(newest.version)) {
      for (const event of history.events ?? []) {
        const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
        if (signal) seen.add(`signal ${signal}`);
        const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
        if (update) seen.add(`update ${update}`);
      }
    }
    const missing = recordedHandlers
      .map((handler) => `${handler.type} ${handler.name}`)
      .filter((handler) => !seen.has(handler));
    expect(missing, `not in any history of ${newest.version}'s corpus`).toEqual([]);
  });
});
