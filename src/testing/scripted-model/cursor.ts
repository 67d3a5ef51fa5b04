import type { RecordedRequest } from './recorded-request.js';
import type { ScriptStep } from './script.js';

/** The conversation of requests that carry no idempotency key, or one not shaped like the model activity's. */
export const DEFAULT_CONVERSATION = '(default)';

/**
 * The model activity's key is `<workflowId>/<runId>/turn-<n>/round-<r>[/suffix]`. It is parsed from the end
 * because workflow ids may contain `/`; the run id is dropped so that one cursor spans continue-as-new.
 */
const IDEMPOTENCY_KEY_PATTERN = /^(.+)\/[^/]+\/turn-\d+\/round-\d+(?:\/.*)?$/;

/** The conversation (workflow id) an idempotency key belongs to. */
export function conversationOf(idempotencyKey: string | null): string {
  if (idempotencyKey === null) return DEFAULT_CONVERSATION;
  return IDEMPOTENCY_KEY_PATTERN.exec(idempotencyKey)?.[1] ?? DEFAULT_CONVERSATION;
}

/** The step that answers a request; `step` is undefined past the end of the script. */
export interface Selection {
  stepIndex: number;
  step: ScriptStep | undefined;
}

/** Finds the step at a position, calling step functions; `undefined` past the end of the script. */
export type StepResolver = (stepIndex: number, request: RecordedRequest) => Promise<ScriptStep | undefined>;

/**
 * One conversation's position in the script. A retry (a key already served) gets the same step again, so that
 * a retried activity sees the same answer; errors are the exception, because retrying through them is their point:
 * a retry consumes the error's next time, and once its times are used up the retry gets the next step.
 */
export class ConversationCursor {
  private position = 0;
  private errorTimesUsed = 0;
  /** Steps as served, so that a step function is called once and a retry gets exactly the same step. */
  private readonly steps = new Map<number, ScriptStep>();
  private readonly stepOfKey = new Map<string, number>();
  /** Selections run one at a time because a step function may be async and must see a stable position. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly resolveStep: StepResolver) {}

  select(request: RecordedRequest, idempotencyKey: string | null): Promise<Selection> {
    const selection = this.queue.then(() => this.selectNow(request, idempotencyKey));
    this.queue = selection.catch(() => undefined);
    return selection;
  }

  private async selectNow(request: RecordedRequest, idempotencyKey: string | null): Promise<Selection> {
    const boundIndex = idempotencyKey === null ? undefined : this.stepOfKey.get(idempotencyKey);
    if (boundIndex !== undefined) {
      const boundStep = this.steps.get(boundIndex);
      if (boundStep !== undefined && !('error' in boundStep)) return { stepIndex: boundIndex, step: boundStep };
    }

    const stepIndex = this.position;
    let step = this.steps.get(stepIndex);
    if (step === undefined) {
      step = await this.resolveStep(stepIndex, request);
      if (step === undefined) return { stepIndex, step: undefined };
      this.steps.set(stepIndex, step);
    }
    if ('error' in step) {
      this.errorTimesUsed += 1;
      if (this.errorTimesUsed >= (step.error.times ?? 1)) this.advance();
    } else {
      this.advance();
    }
    if (idempotencyKey !== null) this.stepOfKey.set(idempotencyKey, stepIndex);
    return { stepIndex, step };
  }

  private advance(): void {
    this.position += 1;
    this.errorTimesUsed = 0;
  }
}
