import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { causeChain } from '../../src/shared/errors.js';

/** Helpers to prove a secret never reaches history, results, logs or the model. */

/** A value that appears nowhere unless something copied it: a fresh secret per call. */
export function canary(label = 'canary'): string {
  return `${label}-${randomUUID()}`;
}

/**
 * All the text in `value`, for a substring search: objects as JSON, byte arrays (payload data in a history or an
 * encoded failure) decoded as UTF-8, errors with the message and stack of each cause.
 */
export function allText(value: unknown): string {
  if (value instanceof Error) {
    return [...causeChain(value)]
      .map((error) => {
        const { message, stack } = error as { message?: unknown; stack?: unknown };
        return `${String(message)}\n${String(stack)}\n${JSON.stringify(error, bytesAsText)}`;
      })
      .join('\n');
  }
  return typeof value === 'string' ? value : (JSON.stringify(value, bytesAsText) ?? '');
}

function bytesAsText(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  // Buffer.prototype.toJSON runs before the replacer sees it.
  if (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'Buffer' &&
    Array.isArray((value as { data?: unknown }).data)
  ) {
    return Buffer.from((value as { data: number[] }).data).toString('utf8');
  }
  return value;
}

/** Where `secret` occurs in `text`, plain or base64-encoded, with some context; empty when it does not. */
export function occurrences(text: string, secret: string): string[] {
  const found: string[] = [];
  for (const form of [secret, Buffer.from(secret).toString('base64'), encodeURIComponent(secret)]) {
    for (let index = text.indexOf(form); index !== -1; index = text.indexOf(form, index + 1)) {
      found.push(text.slice(Math.max(0, index - 120), index + form.length + 40));
    }
  }
  return found;
}

/** The history of every run of a workflow, from its first run through each continue-as-new. */
export async function historiesOfEveryRun(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<Array<{ runId: string; history: unknown }>> {
  const runs: Array<{ runId: string; history: unknown }> = [];
  for (let runId: string | undefined = firstRunId; runId;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push({ runId, history });
    const last = history.events?.at(-1);
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}
