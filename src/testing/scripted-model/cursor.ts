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
  /** True when the request repeated a key bound to a step, and gets that same step again. */
  replayed: boolean;
  /** 1 for the request that got the step first; each retry with its key counts on (2, 3, ...). */
  attempt: number;
}

/** Finds the step at a position, calling step functions; `undefined` past the end of the script. */
export type StepResolver = (stepIndex: number, request: RecordedRequest) => Promise<ScriptStep | undefined>;

/**
 * Whether a step binds the key of the request it is served to. A content or tool-call step is the model's answer:
 * every retry gets it again. An error or a stream that drops (`failAfterChunks`) is a failure of one attempt, and
 * scripts say how many attempts fail before the answer comes.
 */
function bindsKey(step: ScriptStep): boolean {
  return !('error' in step) && step.failAfterChunks === undefined;
}

interface Binding {
  stepIndex: number;
  attempts: number;
}

/**
 * One conversation's position in the script.
 *
 * A content or tool-call step is bound to the request's idempotency key when it is selected, and a retry with that key
 * gets the same step again, whether or not the first answer arrived: a worker that died during `delayMs` or mid-stream
 * retries the same model call, and a crash test then needs the same script whenever the kill lands. Error steps and
 * dropped streams are not bound: each attempt takes the cursor's current step, the error's next time while its `times`
 * last, and otherwise the next step.
 */
export class ConversationCursor {
  private position = 0;
  private errorTimesUsed = 0;
  /** Steps as served, so that a step function is called once and a retry gets exactly the same step. */
  private readonly steps = new Map<number, ScriptStep>();
  private readonly bindings = new Map<string, Binding>();
  /** Selections run one at a time because a step function may be async and must see a stable position. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly resolveStep: StepResolver) {}

  select(request: RecordedRequest, idempotencyKey: string | null): Promise<Selection> {
    const selection = this.queue.then(() => this.selectNow(request, idempotencyKey));
    this.queue = selection.catch(() => undefined);
    return selection;
  }

  private async selectNow(request: RecordedRequest, idempotencyKey: string | null): Promise<Selection> {
    const binding = idempotencyKey === null ? undefined : this.bindings.get(idempotencyKey);
    if (binding !== undefined) {
      binding.attempts += 1;
      const step = this.steps.get(binding.stepIndex);
      return { stepIndex: binding.stepIndex, step, replayed: true, attempt: binding.attempts };
    }

    const stepIndex = this.position;
    let step = this.steps.get(stepIndex);
    if (step === undefined) {
      step = await this.resolveStep(stepIndex, request);
      if (step === undefined) return { stepIndex, step, replayed: false, attempt: 1 };
      this.steps.set(stepIndex, step);
    }
    if ('error' in step) {
      this.errorTimesUsed += 1;
      if (this.errorTimesUsed >= (step.error.times ?? 1)) this.advance();
    } else {
      this.advance();
    }
    if (idempotencyKey !== null && bindsKey(step)) this.bindings.set(idempotencyKey, { stepIndex, attempts: 1 });
    return { stepIndex, step, replayed: false, attempt: 1 };
  }

  private advance(): void {
    this.position += 1;
    this.errorTimesUsed = 0;
  }
}
