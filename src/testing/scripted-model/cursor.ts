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
  /** True when the request repeated a key whose answer was delivered, and gets that same step again. */
  replayed: boolean;
  /** Call once the answer has reached the client in full, so that a retry with the same key gets it again. */
  markDelivered: () => void;
}

/** Finds the step at a position, calling step functions; `undefined` past the end of the script. */
export type StepResolver = (stepIndex: number, request: RecordedRequest) => Promise<ScriptStep | undefined>;

interface Served {
  stepIndex: number;
  delivered: boolean;
}

const NOTHING_TO_MARK = () => {};

/**
 * One conversation's position in the script.
 *
 * A retry (a request with a key already served) whose earlier answer was delivered gets the same step again: the
 * caller lost a good answer after receiving it (a crashed worker, a timed-out activity), and a real model would
 * answer much the same. An answer that never arrived is a failure, and retrying through failures is what scripts
 * test: after an error, a dropped connection, or a client that gave up during `delayMs`, the retry gets the
 * cursor's current step, which is the error's next time while its `times` last, and otherwise the next step.
 */
export class ConversationCursor {
  private position = 0;
  private errorTimesUsed = 0;
  /** Steps as served, so that a step function is called once and a retry gets exactly the same step. */
  private readonly steps = new Map<number, ScriptStep>();
  private readonly servedByKey = new Map<string, Served>();
  /** Selections run one at a time because a step function may be async and must see a stable position. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly resolveStep: StepResolver) {}

  select(request: RecordedRequest, idempotencyKey: string | null): Promise<Selection> {
    const selection = this.queue.then(() => this.selectNow(request, idempotencyKey));
    this.queue = selection.catch(() => undefined);
    return selection;
  }

  private async selectNow(request: RecordedRequest, idempotencyKey: string | null): Promise<Selection> {
    const earlier = idempotencyKey === null ? undefined : this.servedByKey.get(idempotencyKey);
    if (earlier?.delivered) {
      const step = this.steps.get(earlier.stepIndex);
      return { stepIndex: earlier.stepIndex, step, replayed: true, markDelivered: NOTHING_TO_MARK };
    }

    const stepIndex = this.position;
    let step = this.steps.get(stepIndex);
    if (step === undefined) {
      step = await this.resolveStep(stepIndex, request);
      if (step === undefined) return { stepIndex, step, replayed: false, markDelivered: NOTHING_TO_MARK };
      this.steps.set(stepIndex, step);
    }
    if ('error' in step) {
      this.errorTimesUsed += 1;
      if (this.errorTimesUsed >= (step.error.times ?? 1)) this.advance();
    } else {
      this.advance();
    }
    if (idempotencyKey === null) return { stepIndex, step, replayed: false, markDelivered: NOTHING_TO_MARK };
    const served: Served = { stepIndex, delivered: false };
    this.servedByKey.set(idempotencyKey, served);
    return { stepIndex, step, replayed: false, markDelivered: () => (served.delivered = true) };
  }

  private advance(): void {
    this.position += 1;
    this.errorTimesUsed = 0;
  }
}
