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
