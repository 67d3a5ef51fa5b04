import type { ActivitySlotInfo, CustomSlotSupplier, SlotPermit, WorkerOptions } from '@temporalio/worker';
import type { WorkerConcurrency } from '../config/worker-concurrency.js';

/** The SDK's defaults, kept for the limits that are not set. */
const DEFAULT_ACTIVITY_SLOTS = 100;
const DEFAULT_WORKFLOW_TASK_SLOTS = 40;
const DEFAULT_LOCAL_ACTIVITY_SLOTS = 100;

/** The activity that calls a model; every other activity counts as a tool call. */
const MODEL_ACTIVITY = 'callModel';

/**
 * Activity slots with two limits, model calls and tool calls, on the one task queue both poll. A slot is reserved
 * before the poll, when the next task's type is not known yet, so one is reserved only while both kinds have room:
 * neither limit is ever passed, and what waits, waits in Temporal (where fairness orders it), not in the worker. The
 * price: while one kind is at its limit, the worker takes no task of the other either.
 */
export class CallSlots implements CustomSlotSupplier<ActivitySlotInfo> {
  readonly type = 'custom' as const;
  private reserved = 0;
  private models = 0;
  private tools = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly maxModelCalls: number,
    readonly maxToolCalls: number,
  ) {}

  /** Model and tool calls running now. */
  get running(): { modelCalls: number; toolCalls: number } {
    return { modelCalls: this.models, toolCalls: this.tools };
  }

  async reserveSlot(_context: unknown, abortSignal: AbortSignal): Promise<SlotPermit> {
    while (!this.hasRoom()) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          abortSignal.removeEventListener('abort', abort);
          this.waiting.delete(wake);
          resolve();
        };
        const abort = () => {
          this.waiting.delete(wake);
          // The signal's own reason: the SDK takes that one as the end of a reservation it no longer needs.
          reject(abortSignal.reason as Error);
        };
        if (abortSignal.aborted) return abort();
        abortSignal.addEventListener('abort', abort, { once: true });
        this.waiting.add(wake);
      });
    }
    this.reserved += 1;
    return {};
  }

  tryReserveSlot(): SlotPermit | null {
    if (!this.hasRoom()) return null;
    this.reserved += 1;
    return {};
  }

  markSlotUsed(context: { slotInfo: ActivitySlotInfo }): void {
    this.reserved -= 1;
    if (context.slotInfo.activityType === MODEL_ACTIVITY) this.models += 1;
    else this.tools += 1;
  }

  releaseSlot(context: { slotInfo?: ActivitySlotInfo }): void {
    if (context.slotInfo === undefined) this.reserved -= 1;
    else if (context.slotInfo.activityType === MODEL_ACTIVITY) this.models -= 1;
    else this.tools -= 1;
    for (const wake of [...this.waiting]) wake();
  }

  private hasRoom(): boolean {
    return this.models + this.reserved < this.maxModelCalls && this.tools + this.reserved < this.maxToolCalls;
  }
}

/** The Temporal worker options of the configured limits; none when none is set (the SDK's defaults). */
export function concurrencyOptions(concurrency: WorkerConcurrency): Partial<WorkerOptions> {
  const { modelCalls, toolCalls, workflowTasks } = concurrency;
  if (modelCalls === undefined && toolCalls === undefined) {
    return workflowTasks === undefined ? {} : { maxConcurrentWorkflowTaskExecutions: workflowTasks };
  }
  return {
    tuner: {
      activityTaskSlotSupplier: new CallSlots(
        modelCalls ?? DEFAULT_ACTIVITY_SLOTS,
        toolCalls ?? DEFAULT_ACTIVITY_SLOTS,
      ),
      workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: workflowTasks ?? DEFAULT_WORKFLOW_TASK_SLOTS },
      localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: DEFAULT_LOCAL_ACTIVITY_SLOTS },
      nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: DEFAULT_LOCAL_ACTIVITY_SLOTS },
    },
  };
}
