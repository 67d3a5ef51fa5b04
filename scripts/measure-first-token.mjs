#!/usr/bin/env node
// Measures time to first token: from sending a message until the first `text_delta` reaches a subscriber whose poll
// was already waiting, against the first content chunk when the same scripted model is asked directly. Runs a real
// worker on a Temporal dev server; the scripted model takes 300 ms to its first token, as a hosted model does, then
// writes a word every 20 ms. test/bridge/first-token.test.ts asserts the behaviour; this measures the milliseconds.
//
// Usage: npm run build && node scripts/measure-first-token.mjs [turns=5]
// Uses TEMPORAL_CLI_PATH or the provisioned dev server.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import OpenAI from 'openai';
import { subscribe } from '../dist/client/stream.js';
import { createLocalEnvironment, startTestAgent } from '../dist/testing/index.js';
import { askUpdate, endSignal } from '../dist/workflows/definitions.js';

const turns = Number(process.argv[2] ?? 5);
const MODEL_FIRST_TOKEN_MS = 300;
const script = (_request, { stepIndex }) =>
  stepIndex < turns * 2
    ? { content: 'The first token, then the rest of the answer.', delayMs: MODEL_FIRST_TOKEN_MS, chunkDelayMs: 20 }
    : undefined;

// The worker logs every state change at INFO; only warnings and errors are news here.
Runtime.install({ logger: new DefaultLogger('WARN') });
const env = await createLocalEnvironment();
const agent = await startTestAgent({ env, script });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  const openai = new OpenAI({ baseURL: agent.model.baseUrl, apiKey: 'measure', maxRetries: 0 });
  const direct = [];
  for (let index = 0; index < turns; index++) {
    const started = performance.now();
    const stream = await openai.chat.completions.create(
      { model: 'scripted-model', messages: [{ role: 'user', content: 'Hi' }], stream: true },
      { headers: { 'Idempotency-Key': `direct-${index}/run/turn-1/round-1` } },
    );
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break;
    }
    direct.push(performance.now() - started);
  }

  const durable = [];
  for (let index = 0; index < turns; index++) {
    const conversationId = `first-token-${index}`;
    const handle = await agent.startConversation(conversationId);
    const controller = new AbortController();
    const firstText = (async () => {
      for await (const event of subscribe(env.client, conversationId, { signal: controller.signal })) {
        if (event.type === 'text_delta') return performance.now();
      }
      return NaN;
    })();
    // Let the subscriber's first poll reach the workflow, as a viewer's would before the user sends.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    const asked = handle.executeUpdate(askUpdate, { args: [{ id: 'q', content: 'Hi' }] });
    durable.push((await firstText) - started);
    controller.abort();
    await asked;
    await handle.signal(endSignal);
  }

  const round = (values) => JSON.stringify(values.map(Math.round));
  console.log(
    `time to first token (median of ${turns}): model server directly ${median(direct).toFixed(0)} ms; ` +
      `through durable-agent ${median(durable).toFixed(0)} ms; ratio ${(median(durable) / median(direct)).toFixed(2)}\n` +
      `direct ${round(direct)}, durable-agent ${round(durable)}`,
  );
} finally {
  await agent.close();
  await env.teardown();
}
