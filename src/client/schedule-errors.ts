import { DurableAgentError } from '../shared/errors.js';

/** A schedule id: readable, and short enough that `scheduled-<id>-<time>` stays a valid message id (200 characters). */
export const SCHEDULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Temporal's id of the schedule a user calls `id`: readable in the Web UI's Schedules page, apart from other apps'. */
export function scheduleWorkflowId(id: string): string {
  return `schedule-${id}`;
}

/** Base class of the errors about a schedule; `scheduleId` is the id its creator gave it. */
export class ScheduleError extends DurableAgentError {
  constructor(
    message: string,
    readonly scheduleId: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The schedule's options are wrong (its id, interval, cron expression or message); nothing was created. */
export class InvalidScheduleError extends ScheduleError {
  constructor(scheduleId: string, reason: string, options?: ErrorOptions) {
    super(`Schedule ${scheduleId}: ${reason}`, scheduleId, options);
  }
}

/** No durable-agent schedule has this id. */
export class ScheduleNotFoundError extends ScheduleError {
  constructor(scheduleId: string, options?: ErrorOptions) {
    super(
      `No schedule ${scheduleId} in this namespace. \`durable-agent schedule list\` lists them; create one with ` +
        '`durable-agent schedule create`.',
      scheduleId,
      options,
    );
  }
}

/** A schedule with this id exists already. */
export class ScheduleExistsError extends ScheduleError {
  constructor(scheduleId: string, options?: ErrorOptions) {
    super(
      `Schedule ${scheduleId} exists already. Delete it first (\`durable-agent schedule delete ${scheduleId}\`) or ` +
        'choose another id.',
      scheduleId,
      options,
    );
  }
}

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--every`: a whole number and a unit, `s`, `m`, `h` or `d` (`90s`, `10m`, `2h`, `1d`), at least one second. */
export function parseEvery(scheduleId: string, every: string): number {
  const match = /^(\d+)\s*(s|m|h|d)$/.exec(every.trim());
  const ms = match ? Number(match[1]) * (UNIT_MS[match[2] as string] as number) : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 1_000) {
    throw new InvalidScheduleError(
      scheduleId,
      `Interval "${every}" is not a duration of a second or more: give a whole number and a unit, s, m, h or d ` +
        '(e.g. 30s, 10m, 2h, 1d).',
    );
  }
  return ms;
}
