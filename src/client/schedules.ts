import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError as TemporalScheduleNotFoundError,
  type Client,
  type ScheduleHandle,
  type ScheduleOverlapPolicy,
  type ScheduleSummary as TemporalScheduleSummary,
} from '@temporalio/client';
import { tenantPriority } from '../config/tenants.js';
import { causeChain, errorMessage } from '../shared/errors.js';
import { tenantProblem } from '../shared/tenants.js';
import type { ScheduledMessageInput, ScheduleOverlap } from '../workflows/schedule-types.js';
import { ConversationNotFoundError } from './errors.js';
import type { ConversationRuns } from './conversation-runs.js';
import {
  InvalidScheduleError,
  ScheduleExistsError,
  ScheduleNotFoundError,
  parseEvery,
  SCHEDULE_ID_PATTERN,
  scheduleWorkflowId,
} from './schedule-errors.js';

/**
 * Turns on a schedule (docs/cli.md, "Schedules"): Temporal Schedules whose every firing starts a
 * `scheduledMessageWorkflow`, which signals-with-start the message into the conversation. The schedule lives in the
 * Temporal server, so it fires whether workers run, restart or deploy; a firing waits for a worker like any workflow.
 */

/** The firing workflow's registered name. @internal */
export const SCHEDULED_MESSAGE_WORKFLOW_TYPE = 'scheduledMessageWorkflow';

export interface ScheduleCreateOptions {
  /** The conversation each firing sends its message to; created by the first firing when missing. */
  conversationId: string;
  /** The message each firing sends (not blank). */
  message: string;
  /** Fire every this long: `30s`, `10m`, `2h`, `1d` (at least a second). Exactly one of `every` and `cron`. */
  every?: string;
  /** Fire on this cron expression (five fields, or Temporal's `@every`, `@daily`, ...), in UTC. */
  cron?: string;
  /** While a turn runs or a message waits: `skip` drops the firing, `queue` queues its message. Default `skip`. */
  overlap?: ScheduleOverlap;
  /**
   * The conversation's tenant (docs/tenants.md): the firings' fairness key, and the tenant of the conversation the
   * first firing creates. Default: the tenant of the conversation when it exists, else none.
   */
  tenant?: string;
}

/** A durable-agent schedule as `list` and `describe` give it. */
export interface AgentScheduleSummary {
  /** The id its creator gave it. */
  scheduleId: string;
  /** Temporal's schedule id (`schedule-<id>`). */
  temporalScheduleId: string;
  conversationId: string;
  every?: string;
  cron?: string;
  overlap: ScheduleOverlap;
  /** The tenant its firings run for (docs/tenants.md); absent for a schedule without one. */
  tenant?: string;
  paused: boolean;
  /** Why it is paused, or the last note set on it (an ended conversation pauses its schedules with a note). */
  note?: string;
  /** The next times it fires (none while paused). */
  nextFirings: Date[];
  /** Its latest firings, oldest first: when each was due and the firing workflow it started. */
  recentFirings: { scheduledAt: Date; workflowId: string; runId: string }[];
}

/** What the memo of a durable-agent schedule holds: what `list` shows without reading the action's arguments. */
interface ScheduleMemo {
  scheduleId: string;
  conversationId: string;
  every?: string;
  cron?: string;
  overlap: ScheduleOverlap;
  tenant?: string;
}

const TEMPORAL_OVERLAP: Record<ScheduleOverlap, ScheduleOverlapPolicy> = {
  // A firing while the one before still runs (workers down) is dropped too: skip means skip.
  skip: 'SKIP',
  // Firings that pile up while workers are down are delivered one after another, in order, when they are back.
  queue: 'BUFFER_ALL',
};

/**
 * `DurableAgentClient.schedules`: create, list, pause, unpause, trigger and delete the schedules that send messages
 * into conversations. Errors: `InvalidScheduleError` (bad id, interval, cron or message), `ScheduleExistsError`,
 * `ScheduleNotFoundError`, `ConversationEndedError` (create for an ended conversation).
 */
export class AgentSchedules {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly runs: ConversationRuns,
  ) {}

  /** Create a schedule. Refused for an ended conversation; a missing one is created by the first firing. */
  async create(id: string, options: ScheduleCreateOptions): Promise<AgentScheduleSummary> {
    const spec = checkedSpec(id, options);
    const tenant = await this.tenantFor(id, options);
    const overlap = options.overlap ?? 'skip';
    const input: ScheduledMessageInput = {
      scheduleId: id,
      conversationId: options.conversationId,
      content: options.message,
      overlap,
      ...(tenant === undefined ? {} : { tenant }),
    };
    const memo: ScheduleMemo = {
      scheduleId: id,
      conversationId: options.conversationId,
      ...spec.memo,
      overlap,
      ...(tenant === undefined ? {} : { tenant }),
    };
    try {
      await this.client.schedule.create({
        scheduleId: scheduleWorkflowId(id),
        spec: spec.temporal,
        action: {
          type: 'startWorkflow',
          workflowType: SCHEDULED_MESSAGE_WORKFLOW_TYPE,
          workflowId: `scheduled-${id}`,
          taskQueue: this.taskQueue,
          args: [input],
          // A tenant's firings take their turn by the tenant's fair share, as its conversation's tasks do.
          ...(tenant === undefined ? {} : { priority: tenantPriority(tenant, this.runs.tenants) }),
        },
        policies: { overlap: TEMPORAL_OVERLAP[overlap], catchupWindow: '1 minute' },
        memo: { ...memo },
      });
    } catch (error) {
      if (error instanceof ScheduleAlreadyRunning) throw new ScheduleExistsError(id, { cause: error });
      // The SDK turns the server's "Invalid schedule spec" (INVALID_ARGUMENT) into a TypeError with its reason.
      if (error instanceof TypeError || isInvalidArgument(error)) {
        const what = options.cron !== undefined ? `cron expression "${options.cron}"` : `interval "${options.every}"`;
        throw new InvalidScheduleError(
          id,
          `Temporal refused the ${what}: ${errorMessage(error)}. A cron expression has five fields (minute hour ` +
            'day-of-month month day-of-week), e.g. "*/5 * * * *", or is one of @hourly, @daily, @weekly.',
          { cause: error },
        );
      }
      throw error;
    }
    return await this.describe(id);
  }

  /**
   * The schedule's tenant: the one asked for, else the conversation's. Refused for an ended conversation (it would take
   * none of the messages: said now, not at every firing) and for a tenant other than the conversation's own.
   */
  private async tenantFor(id: string, options: ScheduleCreateOptions): Promise<string | undefined> {
    if (options.tenant !== undefined) {
      const problem = tenantProblem(options.tenant);
      if (problem !== undefined) throw new InvalidScheduleError(id, `The tenant is not valid: ${problem}.`);
    }
    let existing: string | undefined;
    try {
      await this.runs.resolve(options.conversationId, undefined, { mustExist: true });
      existing = await this.runs.tenantOf(options.conversationId);
    } catch (error) {
      if (!(error instanceof ConversationNotFoundError)) throw error;
      return options.tenant;
    }
    if (options.tenant !== undefined && options.tenant !== existing) {
      const whose = existing === undefined ? 'has no tenant' : `belongs to tenant "${existing}"`;
      throw new InvalidScheduleError(
        id,
        `Conversation ${options.conversationId} ${whose}, not "${options.tenant}": a schedule sends for the ` +
          "conversation's own tenant (leave --tenant out to use it).",
      );
    }
    return existing;
  }

  /** The durable-agent schedules of the namespace (schedules of other applications are left out). */
  async list(): Promise<AgentScheduleSummary[]> {
    const found: AgentScheduleSummary[] = [];
    for await (const schedule of this.client.schedule.list()) {
      if (schedule.action?.workflowType !== SCHEDULED_MESSAGE_WORKFLOW_TYPE) continue;
      const summary = toSummary(schedule);
      if (summary !== undefined) found.push(summary);
    }
    return found.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
  }

  /** One schedule, read from the server (not from visibility, which may lag). */
  async describe(id: string): Promise<AgentScheduleSummary> {
    const description = await this.found(id, (handle) => handle.describe());
    const summary = toSummary(description);
    if (summary === undefined || description.action.workflowType !== SCHEDULED_MESSAGE_WORKFLOW_TYPE) {
      throw new ScheduleNotFoundError(id);
    }
    return summary;
  }

  /** Stop firing until `unpause`; `note` says why (the Web UI shows it). */
  async pause(id: string, note = 'paused with durable-agent'): Promise<void> {
    await this.found(id, (handle) => handle.pause(note));
  }

  async unpause(id: string, note = 'unpaused with durable-agent'): Promise<void> {
    await this.found(id, (handle) => handle.unpause(note));
  }

  /** Fire now, once, whatever the spec says (paused or not), under the schedule's overlap setting. */
  async trigger(id: string): Promise<void> {
    await this.found(id, (handle) => handle.trigger());
  }

  /** Delete the schedule: no more firings. A firing already started still delivers its message. */
  async delete(id: string): Promise<void> {
    await this.found(id, (handle) => handle.delete());
  }

  /** Run `call` on the schedule's handle; a schedule that is not there, or not ours, is `ScheduleNotFoundError`. */
  private async found<T>(id: string, call: (handle: ScheduleHandle) => Promise<T>): Promise<T> {
    if (!SCHEDULE_ID_PATTERN.test(id)) throw new ScheduleNotFoundError(id);
    try {
      return await call(this.client.schedule.getHandle(scheduleWorkflowId(id)));
    } catch (error) {
      if (error instanceof TemporalScheduleNotFoundError) throw new ScheduleNotFoundError(id, { cause: error });
      throw error;
    }
  }
}

/** The Temporal spec and the memo of a schedule's options, or the `InvalidScheduleError` that names what is wrong. */
function checkedSpec(
  id: string,
  options: ScheduleCreateOptions,
): { temporal: { intervals: { every: number }[] } | { cronExpressions: string[] }; memo: Partial<ScheduleMemo> } {
  if (!SCHEDULE_ID_PATTERN.test(id)) {
    throw new InvalidScheduleError(
      id,
      'A schedule id is 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit.',
    );
  }
  if (options.message.trim() === '') throw new InvalidScheduleError(id, 'The message is blank: give the text to send.');
  if ((options.every === undefined) === (options.cron === undefined)) {
    throw new InvalidScheduleError(id, 'Give exactly one of --every DURATION (e.g. 10m) and --cron EXPRESSION.');
  }
  if (options.overlap !== undefined && !(options.overlap in TEMPORAL_OVERLAP)) {
    throw new InvalidScheduleError(id, `Overlap "${String(options.overlap)}" is neither "skip" nor "queue".`);
  }
  if (options.every !== undefined) {
    return { temporal: { intervals: [{ every: parseEvery(id, options.every) }] }, memo: { every: options.every } };
  }
  const cron = (options.cron as string).trim();
  if (cron === '') throw new InvalidScheduleError(id, 'The cron expression is blank.');
  return { temporal: { cronExpressions: [cron] }, memo: { cron } };
}

/** Ours, read from the memo (a schedule of another application, or one whose memo is unreadable, is left out). */
function toSummary(
  schedule: Pick<TemporalScheduleSummary, 'scheduleId' | 'memo' | 'state' | 'info'>,
): AgentScheduleSummary | undefined {
  const memo = schedule.memo as Partial<ScheduleMemo> | undefined;
  if (typeof memo?.scheduleId !== 'string' || typeof memo.conversationId !== 'string') return undefined;
  return {
    scheduleId: memo.scheduleId,
    temporalScheduleId: schedule.scheduleId,
    conversationId: memo.conversationId,
    ...(memo.every !== undefined ? { every: memo.every } : {}),
    ...(memo.cron !== undefined ? { cron: memo.cron } : {}),
    overlap: memo.overlap === 'queue' ? 'queue' : 'skip',
    ...(typeof memo.tenant === 'string' ? { tenant: memo.tenant } : {}),
    paused: schedule.state.paused,
    ...(schedule.state.note ? { note: schedule.state.note } : {}),
    nextFirings: schedule.info.nextActionTimes,
    recentFirings: schedule.info.recentActions.map((action) => ({
      scheduledAt: action.scheduledAt,
      workflowId: action.action.workflow.workflowId,
      runId: action.action.workflow.firstExecutionRunId,
    })),
  };
}

/** gRPC INVALID_ARGUMENT (3) anywhere in the cause chain: the server refused the spec. */
function isInvalidArgument(error: unknown): boolean {
  return [...causeChain(error)].some((cause) => (cause as { code?: unknown }).code === 3);
}
