import { ConfigError } from '../config.js';
import { errorMessage } from '../shared/errors.js';

/** Exit codes of the `durable-agent` CLI (documented in the README). */
export const ExitCode = {
  Ok: 0,
  /** Something unexpected failed. */
  Failure: 1,
  /** The command line or the configuration is wrong. */
  Usage: 2,
  /** The conversation does not exist. */
  NotFound: 3,
  /** The conversation has ended. */
  Ended: 4,
  /** The turn ended without an answer (budget stop without a final answer, model error, cancelled). */
  TurnFailed: 5,
  /** A required server (Temporal, the model, an MCP server) could not be reached or provisioned. */
  Unavailable: 69,
} as const;

/** Print an error the way a person wants to read it and return the exit code it maps to. */
export function reportError(error: unknown): number {
  if (error instanceof ConfigError) {
    process.stderr.write(`durable-agent: ${error.message}\n`);
    return ExitCode.Usage;
  }
  const exitCode = (error as { exitCode?: unknown }).exitCode;
  const message = errorMessage(error);
  process.stderr.write(`durable-agent: ${message}\n`);
  if (process.env.DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return typeof exitCode === 'number' ? exitCode : ExitCode.Failure;
}
