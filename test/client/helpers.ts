import { setTimeout as sleep } from 'node:timers/promises';
import type { Script, ScriptStep } from '../../src/testing/scripted-model/script.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';

/**
 * One scripted model for a whole test file: each conversation gets its own steps, looked up by the workflow id the
 * model activity sends (the scripted model keeps one cursor per conversation).
 */
export class ScriptBook {
  private readonly steps = new Map<string, ScriptStep[]>();
  private counter = 0;

  constructor(private readonly prefix: string) {}

  /** A fresh conversation id whose model answers are `steps`, in order. */
  conversation(name: string, steps: ScriptStep[] = []): string {
    const id = `${this.prefix}-${name}-${++this.counter}-${Math.random().toString(36).slice(2, 8)}`;
    this.steps.set(conversationWorkflowId(id), steps);
    return id;
  }

  readonly script: Script = (request, { stepIndex }) => this.steps.get(request.conversation)?.[stepIndex];
}

/** Poll `read` until `done` holds (real time; the dev server does not skip time). */
export async function poll<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  { attempts = 300, intervalMs = 200 }: { attempts?: number; intervalMs?: number } = {},
): Promise<T> {
  let last: T | undefined;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(
    `condition never held; last value: ${JSON.stringify(last)}${lastError instanceof Error ? `; last error: ${lastError.message}` : ''}`,
  );
}
