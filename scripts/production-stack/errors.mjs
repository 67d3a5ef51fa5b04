/** Exit codes of scripts/production-stack.mjs (those of the durable-agent CLI where they mean the same). */
export const ExitCode = {
  Ok: 0,
  /** The stack could not do it: running already, a busy port, a DIR of another version, a process that failed. */
  Failure: 1,
  /** The command line is wrong: an unknown command or role, no DIR. */
  Usage: 2,
  /** `status`: the stack is set up but not every process runs. */
  NotRunning: 3,
  /** A tool the stack needs (PostgreSQL, Go for the first build) is missing. */
  Unavailable: 69,
};

/** A failure whose message is the whole story: printed as is, without a stack trace, with its exit code. */
export class StackError extends Error {
  name = 'StackError';

  constructor(message, exitCode = ExitCode.Failure) {
    super(message);
    this.exitCode = exitCode;
  }
}
