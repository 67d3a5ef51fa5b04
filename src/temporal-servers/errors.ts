import { DurableAgentError } from '../shared/errors.js';
import { ExitCode } from '../shared/exit-codes.js';

/** A Temporal server binary could not be found or provisioned; the message says what to install or set. */
export class ServerUnavailableError extends DurableAgentError {
  /** Read by the CLI's reportError to pick the exit code. */
  readonly exitCode = ExitCode.Unavailable;
}
