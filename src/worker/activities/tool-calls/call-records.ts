import type { CallToolResult } from '../../../shared/types.js';
import { outcomeUnknownText } from '../../../workflows/tool-calls.js';
import type { FailedAttemptsRecord } from '../calls/heartbeat.js';

/** What the `callTool` activity records of a call, for MCP tools and TypeScript tools alike. */

/**
 * Heartbeat details of a tool call. An attempt that fails before its request left records `not_sent` with its attempt
 * number as it fails; that record is the only thing that lets a retry call a tool that is not safe to repeat (see
 * docs/mcp.md). `connecting` and `sent` are what the periodic heartbeat shows while a call runs.
 */
export interface ToolCallHeartbeat extends FailedAttemptsRecord {
  phase: 'connecting' | 'sent' | 'not_sent';
  /** The attempt that recorded `not_sent`. */
  attempt?: number;
  /** The last progress notification of the call, if the server sends any. */
  progress?: { progress: number; total?: number; message?: string };
}

/** The result the model gets when a call that is not safe to repeat may or may not have run. */
export function outcomeUnknown(toolName: string, reason: string): CallToolResult {
  return {
    outcome: 'outcome_unknown',
    content: outcomeUnknownText(toolName, reason),
    truncated: false,
  };
}
