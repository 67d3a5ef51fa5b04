/** Exit codes of the `durable-agent` CLI (documented in docs/cli.md, "Exit codes"). */
export const ExitCode = {
  Ok: 0,
  /** Something unexpected failed. */
  Failure: 1,
  /** The command line or the configuration is wrong. */
  Usage: 2,
  /** The conversation does not exist; for `approve` / `deny`, no such call waits for approval. */
  NotFound: 3,
  /** The conversation has ended. */
  Ended: 4,
  /** The turn ended without an answer (budget stop without a final answer, model error, cancelled). */
  TurnFailed: 5,
  /** `approve` / `deny`: the tool call was decided already (elsewhere, by a timeout or an interrupt). */
  AlreadyDecided: 6,
  /** `replay`: a history does not replay on this version (deploying it in place would fail that conversation). */
  NotReplayable: 7,
  /** A required server (Temporal, the model, an MCP server) could not be reached or provisioned. */
  Unavailable: 69,
} as const;
