import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';

/** Helpers to prove a secret never reaches history, results, logs or the model. */

/** A value that appears nowhere unless something copied it: a fresh secret per call. */
export function canary(label = 'canary'): string {
  return `${label}-${randomUUID()}`;
}

/**
 * All the text in `value`, for a substring search: every string and every byte array (payload data in a history or
 * an encoded failure) decoded as UTF-8, found by walking the object itself (a history's `toJSON` would turn the bytes
 * into base64, where a secret inside a payload cannot be searched for), and each error's message and stack.
 */
export function allText(value: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  const visit = (item: unknown): void => {
    if (typeof item === 'string') {
      parts.push(item);
      return;
    }
    if (typeof item !== 'object' || item === null || seen.has(item)) return;
    seen.add(item);
    if (item instanceof Uint8Array) {
      parts.push(Buffer.from(item).toString('utf8'));
      return;
    }
    if (item instanceof Error) {
      parts.push(item.message, item.stack ?? '');
      visit(item.cause);
    }
    for (const key of Object.keys(item)) visit((item as Record<string, unknown>)[key]);
  };
  visit(value);
  return parts.join('\n');
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
