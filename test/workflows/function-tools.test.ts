import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ChatMessage } from '../../src/shared/types.js';
import type { TestAgentOptions } from '../../src/testing/agent.js';
import { createToolRegistry, defineTool, type FunctionTool, type ToolRegistry } from '../../src/worker/tools/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  approveUpdate,
  type ConversationOutcome,
  type ConversationSettings,
  interruptSignal,
} from '../../src/workflows/definitions.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { expectValidToolPairing, toolResults } from '../helpers/transcript.js';
import { waitForStatus } from '../helpers/status.js';

const bed = useTimeSkippingWithCrm();
type Handle = WorkflowHandle<typeof conversationWorkflow>;
let counter = 0;

/** The service the tools reach by injection: an order store that counts what was asked of it. */
class OrderStore {
  readonly orders = new Map([['o-1', { id: 'o-1', status: 'shipped', total: 42 }]]);
  readonly lookups: string[] = [];
  readonly cancellations: string[] = [];
}

function orderTools(store: OrderStore, requireApproval: 'never' | 'writes' = 'never'): ToolRegistry {
  return createToolRegistry({
    dependencies: { store },
    requireApproval,
    tools: ({ store: orders }) => [
      defineTool({
        name: 'lookup_order',
        description: 'Look up an order by id.',
        parameters: z.object({ orderId: z.string().regex(/^o-\d+$/) }),
        annotations: { readOnlyHint: true },
        execute: ({ orderId }) => {
          orders.lookups.push(orderId);
          return orders.orders.get(orderId) ?? null;
        },
      }),
      defineTool({
        name: 'cancel_order',
        description: 'Cancel an order.',
        parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        // JSON Schema parameters: the workflow has checked them, so orderId is a string.
        execute: (args) => {
          const orderId = args.orderId as string;
          orders.cancellations.push(orderId);
          return `Order ${orderId} is cancelled.`;
        },
      }),
    ],
  });
}

function agentWith(script: TestAgentOptions['script'], tools: ToolRegistry | FunctionTool[]) {
  // No workflow cached: every task replays the history so far, so a call that did not replay the same commands fails.
  return bed.agentWith(script, { workerOptions: { tools, worker: { maxCachedWorkflows: 0 } } });
}

async function start(
  agent: Awaited<ReturnType<typeof agentWith>>,
  message: string,
  settings: ConversationSettings = {},
): Promise<Handle> {
  const id = `function-tools-${++counter}`;
  return agent.startConversation(id, {
    settings,
    messages: [{ id: `${id}-m`, content: message }],
    closeWhenIdle: true,
  });
}

function toolMessages(outcome: ConversationOutcome): Extract<ChatMessage, { role: 'tool' }>[] {
  return outcome.state.transcript.filter((message) => message.role === 'tool');
}

describe('TypeScript tools beside MCP tools', () => {
  it('a function tool and an MCP tool run in one round; the model sees both by their own names', async () => {
    const store = new OrderStore();
    const findsBefore = bed.crm.calls.find_user ?? 0;
    const agent = await agentWith(
      [
        {
          toolCalls: [
            { name: 'lookup_order', arguments: { orderId: 'o-1' } },
            { name: 'crm__find_user', arguments: { name: 'Ada' } },
          ],
        },
        { content: "Ada's order o-1 has shipped." },
      ],
      orderTools(store),
    );
    const outcome = await (await start(agent, 'Where is my order?')).result();

    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', rounds: 2, toolCalls: 2 });
    // The injected store is the one execute used.
    expect(store.lookups).toEqual(['o-1']);
    expect((bed.crm.calls.find_user ?? 0) - findsBefore).toBe(1);
    const [first, second] = agent.model.requests;
    const offered = first!.tools!.flatMap((tool) => (tool.type === 'function' ? [tool.function] : []));
    expect(offered.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['lookup_order', 'cancel_order', 'crm__find_user']),
    );
    expect(offered.find((tool) => tool.name === 'lookup_order')).toMatchObject({
      description: 'Look up an order by id.',
      parameters: {
        type: 'object',
        properties: { orderId: { type: 'string', pattern: '^o-\\d+$' } },
        required: ['orderId'],
      },
    });
    expect(toolResults(second!.messages).map((result) => JSON.parse(result.content) as unknown)).toEqual([
      { id: 'o-1', status: 'shipped', total: 42 },
      { id: 'u-1', name: 'Ada Lovelace', companyId: 'c-9' },
    ]);
    expectValidToolPairing(second!.messages);
  });

  it('arguments that do not match the schema are answered invalid_arguments and never reach execute', async () => {
    const store = new OrderStore();
    const agent = await agentWith(
      [{ toolCalls: [{ name: 'lookup_order', arguments: { orderId: 42 } }] }, { content: 'I could not look it up.' }],
      orderTools(store),
    );
    const outcome = await (await start(agent, 'Order 42?')).result();

    expect(store.lookups).toEqual([]);
    const [message] = toolMessages(outcome);
    expect(message).toMatchObject({ outcome: 'invalid_arguments', name: 'lookup_order' });
    expect(message!.content).toContain('/orderId must be string');
    // Not dispatched, so not spent.
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', toolCalls: 0 });
  });

  it('an idempotent tool that throws is retried; a tool that may have run is not, and the model hears so', async () => {
    const attempts: number[] = [];
    const sends: string[] = [];
    const tools = createToolRegistry({
      tools: [
        defineTool({
          name: 'flaky_quote',
          description: 'A price quote from a service that fails once.',
          parameters: z.object({}),
          annotations: { idempotentHint: true },
          execute: (_args, { attempt }) => {
            attempts.push(attempt);
            if (attempt === 1) throw new Error('connection reset');
            return { price: 10 };
          },
        }),
        defineTool({
          name: 'send_invoice',
          description: 'Send an invoice (not safe to repeat).',
          parameters: z.object({ to: z.string() }),
          execute: ({ to }) => {
            sends.push(to);
            throw new Error('mail server hung up');
          },
        }),
      ],
    });
    const agent = await agentWith(
      [
        {
          toolCalls: [
            { name: 'flaky_quote', arguments: {} },
            { name: 'send_invoice', arguments: { to: 'ada@example.com' } },
          ],
        },
        { content: 'The quote is 10; the invoice may or may not have gone out.' },
      ],
      tools,
    );
    const outcome = await (await start(agent, 'Quote and invoice, please.')).result();

    expect(attempts).toEqual([1, 2]);
    expect(sends).toEqual(['ada@example.com']);
    const [quote, invoice] = toolMessages(outcome);
    expect(quote).toMatchObject({ outcome: 'ok', content: '{"price":10}' });
    expect(invoice).toMatchObject({ outcome: 'outcome_unknown', name: 'send_invoice' });
    expect(invoice!.content).toContain('mail server hung up');
  });

  it('a call of a tool not annotated read-only waits for approval under `writes`, then runs once', async () => {
    const store = new OrderStore();
    const agent = await agentWith(
      [
        { toolCalls: [{ name: 'cancel_order', arguments: { orderId: 'o-1' } }] },
        { content: 'Order o-1 is cancelled.' },
      ],
      orderTools(store, 'writes'),
    );
    const handle = await start(agent, 'Cancel o-1.');
    const status = await waitForStatus(handle, (current) => current.pendingApprovals?.length === 1);
    const [pending] = status.pendingApprovals!;
    expect(pending).toMatchObject({
      tool: 'cancel_order',
      server: 'worker',
      arguments: { orderId: 'o-1' },
      reason: 'server "worker" requires approval of tools not annotated read-only',
    });
    expect(store.cancellations).toEqual([]);

    await handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId }] });
    const outcome = await handle.result();
    expect(store.cancellations).toEqual(['o-1']);
    expect(toolMessages(outcome)).toMatchObject([{ outcome: 'ok', content: 'Order o-1 is cancelled.' }]);
  });

  it("an interrupt reaches execute's abort signal, and the call is answered cancelled", async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const abortReasons: unknown[] = [];
    // A plain list: the worker takes tools without dependencies as they are.
    const tools = [
      defineTool({
        name: 'long_report',
        description: 'Builds a report; takes long.',
        parameters: z.object({}),
        annotations: { readOnlyHint: true },
        execute: (_args, { signal }) =>
          new Promise<string>((_resolve, reject) => {
            signal.addEventListener('abort', () => {
              abortReasons.push(signal.reason);
              reject(new Error('stopped'));
            });
            started();
          }),
      }),
    ];
    const agent = await agentWith([{ toolCalls: [{ name: 'long_report', arguments: {} }] }], tools);
    const handle = await start(agent, 'The report, please.');
    await running;
    await handle.signal(interruptSignal, { reason: 'changed my mind' });
    const outcome = await handle.result();

    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'cancelled' });
    // The turn does not wait for the activity to end (the cancellation reaches it with its next heartbeat).
    await vi.waitFor(() => expect(abortReasons).toHaveLength(1), { timeout: 20_000, interval: 100 });
    expect(toolMessages(outcome)).toMatchObject([{ outcome: 'cancelled', name: 'long_report' }]);
  });
});
