import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient, subscribe } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { StreamEvent } from '../../src/workflows/stream-events.js';
import { poll, ScriptBook } from './helpers.js';

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let asker: DurableAgentClient;
let connected: DurableAgentClient;
const book = new ScriptBook('rollover');

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: book.script });
  asker = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
  connected = await DurableAgentClient.connect({
    temporal: { ...loadConfig({}).temporal, address: env.address },
    taskQueue: agent.taskQueue,
  });
});

afterAll(async () => {
  await connected?.close();
  await agent?.close();
  await env?.teardown();
});

const TURNS = 12;

/**
 * Each answer comes in one burst after a pause: the model activity signals the first piece and completes right after,
 * so the subscriber's next poll reaches the run while its last workflow task (the turn's end and the continue-as-new)
 * runs. Temporal refuses such a poll ("workflow is closing"), which the Temporal client retried for 40 s.
 */
const answer = (turn: number) =>
  `Answer ${turn}: every word of this answer reaches the subscriber, whole and in order.`;

describe('subscribe across continue-as-new', () => {
  it.each([
    ['the Temporal SDK default connection', () => env.client],
    ['a DurableAgentClient.connect connection', () => connected.client],
  ] satisfies [string, () => Client][])(
    `subscribe (%s): follows ${TURNS} continue-as-new in a row; each turn_finished, whole, comes before the next turn is answered`,
    async (_name, subscriberClient) => {
      const id = book.conversation(
        'follow',
        Array.from({ length: TURNS }, (_, index) => ({ content: answer(index + 1), delayMs: 300 })),
      );
      const controller = new AbortController();
      const finished: Extract<StreamEvent, { type: 'turn_finished' }>[] = [];
      const offsets: number[] = [];
      const subscription = (async () => {
        for await (const event of subscribe(subscriberClient(), id, { signal: controller.signal })) {
          offsets.push(event.offset);
          if (event.type === 'turn_finished') finished.push(event);
          if (finished.length === TURNS) return;
        }
      })();

      try {
        // Seen by the subscriber when each answer came back: at most the turn before it may still be on its way.
        const seenWhenAnswered: number[] = [];
        for (let turn = 1; turn <= TURNS; turn++) {
          const result = await asker.ask(id, `question ${turn}`, { settings: { maxTurnsPerRun: 1 } });
          expect(result).toMatchObject({ turn, answer: answer(turn) });
          seenWhenAnswered.push(finished.length);
        }
        // Every turn ran in a run of its own.
        expect((await asker.status(id)).turns).toBe(TURNS);
        const lagging = seenWhenAnswered.flatMap((seen, index) =>
          seen < index ? [{ answered: index + 1, seen }] : [],
        );
        expect(lagging).toEqual([]);
        await poll(
          async () => finished.length,
          (count) => count === TURNS,
        );
        await subscription;
      } finally {
        controller.abort();
        await subscription;
      }

      expect(finished.map((event) => event.turn)).toEqual(Array.from({ length: TURNS }, (_, index) => index + 1));
      expect(finished.map((event) => event.answer)).toEqual(finished.map((event) => answer(event.turn)));
      // Offsets run on across the runs without a gap or a repeat.
      expect(offsets).toEqual(offsets.map((_, index) => offsets[0]! + index));
    },
  );
});
