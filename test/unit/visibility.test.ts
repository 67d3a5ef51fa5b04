import { describe, expect, it } from 'vitest';
import type { ConversationStatus } from '../../src/workflows/definitions.js';
import { currentDetails } from '../../src/workflows/visibility.js';

const idle: ConversationStatus = {
  conversationId: 'c1',
  phase: 'idle',
  turns: 0,
  queued: 0,
  transcriptLength: 0,
  transcriptOffset: 0,
};

describe('currentDetails', () => {
  it('visibility: a new conversation shows its id, phase, turns and queue', () => {
    expect(currentDetails(idle)).toBe('**Conversation** `c1` · idle · 0 turns · 0 queued');
  });

  it('visibility: a running turn shows what it is doing and what it has spent', () => {
    const status: ConversationStatus = {
      ...idle,
      phase: 'running',
      turns: 3,
      queued: 1,
      currentTurn: {
        turn: 3,
        messageId: 'm3',
        rounds: 2,
        toolCalls: 4,
        usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
        startedAt: new Date(0).toISOString(),
        activity: 'tools · crm__lookup',
      },
    };

    expect(currentDetails(status).split('\n\n')).toEqual([
      '**Conversation** `c1` · running · 3 turns · 1 queued',
      '**Turn 3** · tools · crm__lookup',
      'rounds 2 · tool calls 4 · tokens 120',
    ]);
  });

  it('visibility: a conversation that spent dollars shows them, and its unpriced calls', () => {
    expect(currentDetails({ ...idle, turns: 2, cost: { usd: 0.0042 } })).toBe(
      '**Conversation** `c1` · idle · 2 turns · 0 queued · $0.004200',
    );
    expect(currentDetails({ ...idle, turns: 2, cost: { usd: 1.5, unpricedCalls: 2 } })).toBe(
      '**Conversation** `c1` · idle · 2 turns · 0 queued · $1.5000 + 2 unpriced',
    );
    expect(currentDetails({ ...idle, cost: { usd: 0 } })).toBe('**Conversation** `c1` · idle · 0 turns · 0 queued');
  });

  it('visibility: between turns it shows how the last turn stopped', () => {
    const lastResult = {
      conversationId: 'c1',
      turn: 2,
      messageId: 'm2',
      answer: null,
      stopReason: 'budget:rounds' as const,
      rounds: 21,
      toolCalls: 0,
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      durationMs: 1,
    };

    expect(currentDetails({ ...idle, turns: 2, lastResult }).split('\n\n')).toEqual([
      '**Conversation** `c1` · idle · 2 turns · 0 queued',
      'Last turn 2: budget:rounds',
    ]);
  });

  it('visibility: each call that waits for a person is named, with a short preview of its arguments', () => {
    const status: ConversationStatus = {
      ...idle,
      phase: 'awaiting_approval',
      turns: 1,
      pendingApprovals: [
        {
          callId: 'call_7',
          turn: 1,
          tool: 'files__write_file',
          server: 'files',
          arguments: { path: '/data/notes.md', content: 'x'.repeat(500) },
          reason: 'server "files" requires approval of tools not annotated read-only',
          requestedAt: new Date(0).toISOString(),
        },
      ],
    };
    const [, pending] = currentDetails(status).split('\n\n');
    expect(pending).toMatch(
      /^\*\*Awaiting approval\*\* · files__write_file call_7 · `\{"path":"\/data\/notes\.md","content":"x+…` · server "files" requires approval of tools not annotated read-only$/,
    );
    expect(pending!.length).toBeLessThan(250);
  });

  it('visibility: a question from an MCP server shows what it asks and how to answer it', () => {
    const status: ConversationStatus = {
      ...idle,
      phase: 'awaiting_input',
      turns: 1,
      pendingInputs: [
        {
          requestId: 'call_1:1:1',
          callId: 'call_1',
          turn: 1,
          tool: 'crm__signup',
          server: 'crm',
          message: 'Who are you?',
          mode: 'form',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } } },
          requestedAt: '2026-01-01T00:00:00.000Z',
          expiresAt: '2026-01-01T00:10:00.000Z',
        },
        {
          requestId: 'call_2:1:1',
          callId: 'call_2',
          turn: 1,
          tool: 'crm__login',
          server: 'crm',
          message: 'Sign in, please.',
          mode: 'url',
          url: 'https://crm.example/login',
          requestedAt: '2026-01-01T00:00:00.000Z',
          expiresAt: '2026-01-01T00:10:00.000Z',
        },
      ],
    };
    expect(currentDetails(status).split('\n\n')).toEqual([
      '**Conversation** `c1` · awaiting_input · 1 turns · 0 queued',
      '**Waiting for input** `call_1:1:1` · crm__signup: Who are you? · fields: name, age · answer with ' +
        '`durable-agent answer -c c1 call_1:1:1` by 2026-01-01T00:10:00.000Z',
      '**Waiting for input** `call_2:1:1` · crm__login: Sign in, please. · open https://crm.example/login · answer ' +
        'with `durable-agent answer -c c1 call_2:1:1` by 2026-01-01T00:10:00.000Z',
    ]);
  });
});
