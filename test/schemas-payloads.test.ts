import { setTimeout as sleep } from 'node:timers/promises';
import type { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import type { conversationWorkflow } from '../src/workflows/conversation.js';
import {
  askUpdate,
  type ConversationSettings,
  endSignal,
  interruptSignal,
  statusQuery,
  transcriptQuery,
  type TranscriptRequest,
  userMessageSignal,
} from '../src/workflows/definitions.js';
import { schemaErrors, schemaValidator } from './helpers/schema-validator.js';
import { useTimeSkippingWithCrm } from './helpers/time-skipping.js';
import { waitForStatus } from './helpers/status.js';

/**
 * The schemas checked against what really crosses the wire: a conversation with tool calls, an interrupt, an ask, a
 * continue-as-new and an end, on a real Temporal server with the real worker, the scripted model and an MCP server.
 * Every public payload is read back from the workflow's history (the JSON a Python or Go client sends and receives)
 * or from the query results, and validated against its schema with Ajv in strict mode.
 */

const bed = useTimeSkippingWithCrm();
const validator = schemaValidator();

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

/** A payload as JSON: the data converter writes `json/plain`, the encoding every Temporal SDK reads. */
function firstPayload(payloads: Payloads): unknown {
  const payload = payloads?.payloads?.[0];
  if (!payload?.data) throw new Error('no payload');
  expect(new TextDecoder().decode(payload.metadata?.encoding ?? undefined)).toBe('json/plain');
  return JSON.parse(new TextDecoder().decode(payload.data));
}

/** The public payloads of one run's history, each with the schema it must satisfy. */
function publicPayloads(events: HistoryEvent[]): { what: string; file: string; value: unknown }[] {
  const signalSchemas: Record<string, string> = {
    userMessage: 'incoming-message.schema.json',
    interrupt: 'interrupt-request.schema.json',
    end: 'end-request.schema.json',
  };
  /** Update name by update id: the completion event names only the id. */
  const updateNames = new Map<string, string>();
  const found: { what: string; file: string; value: unknown }[] = [];
  for (const event of events) {
    const started = event.workflowExecutionStartedEventAttributes;
    if (started)
      found.push({ what: 'start', file: 'conversation-input.schema.json', value: firstPayload(started.input) });
    const signaled = event.workflowExecutionSignaledEventAttributes;
    const signalSchema = signaled?.signalName ? signalSchemas[signaled.signalName] : undefined;
    if (signaled && signalSchema) {
      found.push({ what: `signal ${signaled.signalName}`, file: signalSchema, value: firstPayload(signaled.input) });
    }
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted?.acceptedRequest?.input?.name === 'ask') {
      updateNames.set(accepted.acceptedRequest.meta?.updateId ?? '', 'ask');
      const args = accepted.acceptedRequest.input.args;
      found.push({ what: 'ask argument', file: 'incoming-message.schema.json', value: firstPayload(args) });
    }
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    if (completed && updateNames.get(completed.meta?.updateId ?? '') === 'ask') {
      found.push({
        what: 'ask result',
        file: 'turn-result.schema.json',
        value: firstPayload(completed.outcome?.success),
      });
    }
    const continued = event.workflowExecutionContinuedAsNewEventAttributes;
    if (continued) {
      found.push({
        what: 'continue-as-new',
        file: 'conversation-input.schema.json',
        value: firstPayload(continued.input),
      });
    }
    const closed = event.workflowExecutionCompletedEventAttributes;
    if (closed)
      found.push({ what: 'result', file: 'conversation-outcome.schema.json', value: firstPayload(closed.result) });
  }
  return found;
}

describe('JSON Schemas against a real conversation', () => {
  it('schemas: the start input, signals, ask, queries, continue-as-new input and result of a real conversation validate', async () => {
    const agent = await bed.agentWith([
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { content: 'Ada Lovelace works at Analytical Engines Ltd.' },
      { toolCalls: [{ name: 'crm__hang', arguments: {} }] },
      { content: 'Fine, something else then.' },
      { content: 'The fourth answer, in the second run.' },
    ]);
    const settings: ConversationSettings = {
      systemPrompt: 'You answer questions about the CRM.',
      temperature: 0.2,
      maxCompletionTokens: 500,
      budget: { maxRounds: 5, maxToolCalls: 10 },
      finalAnswer: true,
      modelAttempts: 3,
      toolAttempts: 2,
      maxTurnsPerRun: 3,
      maxMessageChars: 5_000,
      stream: true,
    };
    const handle = await agent.startConversation('schemas-payloads', {
      settings,
      messages: [{ id: 'm-1', content: 'Who is Ada, and where does she work?' }],
    });
    const checked: { what: string; file: string; value: unknown }[] = [];
    const check = (what: string, file: string, value: unknown) => checked.push({ what, file, value });

    await waitForStatus(handle, (status) => status.phase === 'idle' && status.turns === 1, 300);
    await handle.signal(userMessageSignal, { id: 'm-2', content: 'Do the slow thing.' });
    const running = await waitForStatus(
      handle,
      (status) => status.currentTurn?.activity.startsWith('tools') ?? false,
      300,
    );
    check('status while a turn runs', 'conversation-status.schema.json', running);
    await handle.signal(interruptSignal, { reason: 'changed my mind' });
    await waitForStatus(handle, (status) => status.phase === 'idle' && status.turns === 2, 300);
    check(
      'ask result (client side)',
      'turn-result.schema.json',
      await handle.executeUpdate(askUpdate, {
        args: [{ id: 'm-3', content: 'Something else, then.' }],
      }),
    );

    // Three turns per run: the run continues as new; the next ask goes to the new run.
    const latest = agent.env.client.workflow.getHandle<typeof conversationWorkflow>(handle.workflowId);
    let description = await latest.describe();
    for (let attempt = 0; attempt < 100 && description.runId === handle.firstExecutionRunId; attempt++) {
      await sleep(100);
      description = await latest.describe();
    }
    expect(description.runId).not.toBe(handle.firstExecutionRunId);
    await latest.executeUpdate(askUpdate, { args: [{ id: 'm-4', content: 'And a fourth question.' }] });

    const status = await latest.query(statusQuery);
    expect(status).toMatchObject({ phase: 'idle', turns: 4, transcriptOffset: 0 });
    check('status', 'conversation-status.schema.json', status);
    const requests: (TranscriptRequest | undefined)[] = [undefined, { from: 0, limit: 3 }, { from: 5 }];
    for (const request of requests) {
      if (request) check('transcript argument', 'transcript-request.schema.json', request);
      check('transcript page', 'transcript-page.schema.json', await latest.query(transcriptQuery, request));
    }

    await latest.signal(endSignal, { reason: 'done' });
    const outcome = await handle.result();
    expect(outcome.closedBecause).toBe('ended');

    for (const runId of [handle.firstExecutionRunId, description.runId]) {
      const history = await agent.env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
      checked.push(...publicPayloads(history.events ?? []));
    }
    const kinds = checked.map((entry) => entry.what);
    for (const kind of [
      'start',
      'signal userMessage',
      'signal interrupt',
      'signal end',
      'ask argument',
      'ask result',
      'continue-as-new',
      'result',
      'status while a turn runs',
      'transcript page',
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    // The payloads are not trivial: tool calls and tool results, a running turn, and state carried across runs.
    expect(running.currentTurn).toBeDefined();
    expect(JSON.stringify(checked.find((entry) => entry.what === 'continue-as-new')?.value)).toContain('"role":"tool"');

    const invalid = checked
      .map(({ what, file, value }) => ({ what, file, errors: schemaErrors(validator(file), value) }))
      .filter((entry) => entry.errors.length > 0);
    expect(invalid).toEqual([]);

    // …and the schemas are not so loose that anything passes: a renamed field in any of these payloads is refused.
    for (const { what, file, value } of checked) {
      const [first, ...rest] = Object.entries(value as Record<string, unknown>);
      if (!first) continue;
      const renamed = Object.fromEntries([[`${first[0]}Renamed`, first[1]], ...rest]);
      expect(schemaErrors(validator(file), renamed), `${what} with ${first[0]} renamed`).not.toEqual([]);
    }
  });
});
