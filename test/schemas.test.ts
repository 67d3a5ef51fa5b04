import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { MAX_MESSAGE_ID_CHARS, validateMessage } from '../src/workflows/conversation-state.js';
import type { conversationWorkflow } from '../src/workflows/conversation.js';
import {
  answerInputUpdate,
  type ApprovalDecision,
  approveUpdate,
  type ApproveRequest,
  askUpdate,
  type ConversationInput,
  type ConversationOutcome,
  type ConversationStatus,
  denyUpdate,
  type DenyRequest,
  endSignal,
  type EndRequest,
  type IncomingMessage,
  type InputAnswer,
  interruptSignal,
  type InterruptRequest,
  statusQuery,
  type TranscriptPage,
  transcriptQuery,
  type TranscriptRequest,
  type TurnResult,
  userMessageSignal,
} from '../src/workflows/definitions.js';
import { SCHEMAS_DIR, schemaErrors, schemaValidator } from './helpers/schema-validator.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const committedDir = fileURLToPath(SCHEMAS_DIR);
const schemaFiles = readdirSync(committedDir).filter((file) => file.endsWith('.schema.json'));
interface SchemaFile {
  title: string;
  $ref: string;
  definitions: Record<string, { properties?: Record<string, { maxLength?: number }> }>;
}
const schema = (file: string) => JSON.parse(readFileSync(path.join(committedDir, file), 'utf8')) as SchemaFile;
const validator = schemaValidator();

/** Each public handler's payloads and the schema file that describes them (docs/protocol.md has the same table). */
const HANDLER_SCHEMAS = {
  'start argument': ['conversation-input.schema.json', 'ConversationInput'],
  'workflow result': ['conversation-outcome.schema.json', 'ConversationOutcome'],
  'userMessage signal': ['incoming-message.schema.json', 'IncomingMessage'],
  'ask update argument': ['incoming-message.schema.json', 'IncomingMessage'],
  'ask update result': ['turn-result.schema.json', 'TurnResult'],
  'interrupt signal': ['interrupt-request.schema.json', 'InterruptRequest'],
  'end signal': ['end-request.schema.json', 'EndRequest'],
  'status query result': ['conversation-status.schema.json', 'ConversationStatus'],
  'transcript query argument': ['transcript-request.schema.json', 'TranscriptRequest'],
  'transcript query result': ['transcript-page.schema.json', 'TranscriptPage'],
  'settings (in the start argument)': ['conversation-settings.schema.json', 'ConversationSettings'],
  'approve update argument': ['approve-request.schema.json', 'ApproveRequest'],
  'deny update argument': ['deny-request.schema.json', 'DenyRequest'],
  'approve and deny update result': ['approval-decision.schema.json', 'ApprovalDecision'],
  'answerInput update argument and result': ['input-answer.schema.json', 'InputAnswer'],
} as const;

describe('JSON Schemas of the conversation protocol (schemas/)', () => {
  it('schemas: the committed files are exactly what `npm run schemas` generates from the TypeScript types', () => {
    const freshDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-schemas-'));
    try {
      execFileSync(process.execPath, ['scripts/generate-schemas.mjs', freshDir], { cwd: root, stdio: 'pipe' });
      const fresh = readdirSync(freshDir).sort();
      expect(schemaFiles.sort(), 'schema files (run `npm run schemas` and commit schemas/)').toEqual(fresh);
      for (const file of fresh) {
        const generated = readFileSync(path.join(freshDir, file), 'utf8');
        const committed = readFileSync(path.join(committedDir, file), 'utf8');
        expect(committed, `schemas/${file} is stale: run \`npm run schemas\` and commit it`).toBe(generated);
      }
    } finally {
      rmSync(freshDir, { recursive: true, force: true });
    }
  });

  it('schemas: every public payload has its schema, titled with its TypeScript type', () => {
    for (const [payload, [file, type]] of Object.entries(HANDLER_SCHEMAS)) {
      expect(schemaFiles, payload).toContain(file);
      expect(schema(file), file).toMatchObject({ title: type, $ref: `#/definitions/${type}` });
    }
    expect(new Set(Object.values(HANDLER_SCHEMAS).map(([file]) => file))).toEqual(new Set(schemaFiles));
  });

  it('schemas: the handlers take and return exactly the types the schemas are generated from', () => {
    // Checked by the compiler (npm run typecheck): a handler whose types change without its schema fails here.
    expectTypeOf<Parameters<typeof conversationWorkflow>>().toEqualTypeOf<[ConversationInput]>();
    expectTypeOf<Awaited<ReturnType<typeof conversationWorkflow>>>().toEqualTypeOf<ConversationOutcome>();
    expectTypeOf(userMessageSignal).toEqualTypeOf<SignalDefinition<[IncomingMessage], string>>();
    expectTypeOf(askUpdate).toEqualTypeOf<UpdateDefinition<TurnResult, [IncomingMessage], string>>();
    expectTypeOf(interruptSignal).toEqualTypeOf<SignalDefinition<[InterruptRequest?], string>>();
    expectTypeOf(endSignal).toEqualTypeOf<SignalDefinition<[EndRequest?], string>>();
    expectTypeOf(statusQuery).toEqualTypeOf<QueryDefinition<ConversationStatus, [], string>>();
    expectTypeOf(transcriptQuery).toEqualTypeOf<QueryDefinition<TranscriptPage, [TranscriptRequest?], string>>();
    expectTypeOf(approveUpdate).toEqualTypeOf<UpdateDefinition<ApprovalDecision, [ApproveRequest], string>>();
    expectTypeOf(denyUpdate).toEqualTypeOf<UpdateDefinition<ApprovalDecision, [DenyRequest], string>>();
    expectTypeOf(answerInputUpdate).toEqualTypeOf<UpdateDefinition<InputAnswer, [InputAnswer], string>>();
  });

  it('schemas: every schema compiles in Ajv strict mode', () => {
    for (const file of schemaFiles) expect(() => validator(file), file).not.toThrow();
  });

  it("schemas: incoming-message accepts and refuses the same messages as the workflow's validator", () => {
    expect(schema('incoming-message.schema.json').definitions.IncomingMessage?.properties?.id?.maxLength).toBe(
      MAX_MESSAGE_ID_CHARS,
    );
    const samples: unknown[] = [
      { id: 'm-1', content: 'hello' },
      { id: 'x'.repeat(MAX_MESSAGE_ID_CHARS), content: 'hello' },
      { id: 'x'.repeat(MAX_MESSAGE_ID_CHARS + 1), content: 'hello' },
      { id: '', content: 'hello' },
      { id: ' \t', content: 'hello' },
      { id: 'm-2', content: '' },
      { id: 'm-3', content: ' \n ' },
      { id: 7, content: 'hello' },
      { id: 'm-4', content: ['hello'] },
      { content: 'hello' },
      { id: 'm-5' },
      'hello',
      null,
    ];
    const validate = validator('incoming-message.schema.json');
    const verdicts = samples.map((sample) => {
      let workflow = true;
      try {
        validateMessage(sample, {});
      } catch {
        workflow = false;
      }
      return { sample, workflow, schema: schemaErrors(validate, sample).length === 0 };
    });
    expect(verdicts.filter((verdict) => verdict.workflow !== verdict.schema)).toEqual([]);
    expect(verdicts.map((verdict) => verdict.schema)).toEqual([true, true, ...samples.slice(2).map(() => false)]);
  });

  it('schemas: StopReason is a closed set plus `error:<type>`, not any string', () => {
    const validate = validator('turn-result.schema.json');
    const result: TurnResult = {
      conversationId: 'c',
      turn: 1,
      messageId: 'm-1',
      answer: null,
      stopReason: 'completed',
      rounds: 1,
      toolCalls: 0,
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      durationMs: 5,
    };
    for (const stopReason of ['completed', 'cancelled', 'budget:toolCalls', 'error:ModelCallFailed']) {
      expect(schemaErrors(validate, { ...result, stopReason }), stopReason).toEqual([]);
    }
    for (const stopReason of ['done', 'budget:money', 'Error:x', '']) {
      expect(schemaErrors(validate, { ...result, stopReason }), stopReason).not.toEqual([]);
    }
    expect(schemaErrors(validate, { ...result, turn: 1.5 })).not.toEqual([]);
  });
});
