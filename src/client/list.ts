import { WorkflowNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import type { ConversationPhase } from '../workflows/definitions.js';
import { CONVERSATION_WORKFLOW_TYPE, ENDED_STATUSES } from './conversation-runs.js';
import type { CostSpend } from '../shared/types.js';
import type { ConversationSummary, ListOptions } from './types.js';

const OURS = `WorkflowType = '${CONVERSATION_WORKFLOW_TYPE}'`;
const status = SearchAttribute.status.name;
const BROKEN = `ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut', 'Canceled')`;

/**
 * Visibility queries that list each conversation once, by its state (docs/protocol.md, "Listing conversations"): for
 * the Web UI's filter, `temporal workflow list --query`, or any SDK's list call. An open conversation has one running
 * run; the runs it continued from and the closed runs a reopened conversation left behind keep the status they last
 * had, so the open states are asked of running runs only. An ended conversation has one run that says `ended` (a run
 * started over it later only keeps it readable and sets no status), or it broke: its run failed or was terminated.
 */
export const CONVERSATION_QUERIES = {
  running: `${OURS} AND ExecutionStatus = 'Running' AND ${status} = 'running'`,
  /** Waiting for a person's decision on a tool call (docs/approvals.md). */
  awaiting_approval: `${OURS} AND ExecutionStatus = 'Running' AND ${status} = 'awaiting_approval'`,
  idle: `${OURS} AND ExecutionStatus = 'Running' AND ${status} = 'idle'`,
  ended: `${OURS} AND (${status} = 'ended' OR ${BROKEN})`,
  /** A turn waits for a person to answer an MCP server's question (docs/mcp.md). */
  awaiting_input: `${OURS} AND ExecutionStatus = 'Running' AND ${status} = 'awaiting_input'`,
} as const;

/**
 * Conversations, newest first, one entry each (its latest run), filtered by state through the search attributes.
 * Visibility is eventually consistent: a conversation changed a moment ago may show its previous state.
 * `DurableAgentClient.list` is the public way in.
 * @internal
 */
export async function listConversations(client: Client, options: ListOptions = {}): Promise<ConversationSummary[]> {
  const limit = options.limit ?? 100;
  const query = listQuery(options);
  const seen = new Set<string>();
  const summaries: ConversationSummary[] = [];
  for await (const execution of client.workflow.list({ query, pageSize: Math.min(1000, limit * 2) })) {
    if (seen.has(execution.workflowId)) continue;
    const executionStatus = execution.status.name;
    const recorded = execution.typedSearchAttributes.get(SearchAttribute.status);
    // A run that set no status only kept an ended conversation readable, or handed over to the one it found closed.
    if (recorded === undefined && executionStatus === 'COMPLETED') continue;
    // Closed idle runs of a conversation that reopened since are not its state; ended and broken runs are final.
    const final = recorded === 'ended' || ENDED_STATUSES[executionStatus] !== undefined;
    if (executionStatus !== 'RUNNING' && !final && !(await isLatestRun(client, execution))) continue;
    seen.add(execution.workflowId);
    summaries.push(toSummary(execution));
    if (summaries.length >= limit) break;
  }
  return summaries;
}

/**
 * The visibility query of `list`: the documented one for running and ended; idle ones also closed idle (they reopen on
 * the next message), and without a state every run that did not continue as new (each checked above).
 */
function listQuery(options: ListOptions): string {
  const conditions = [
    options.status === 'running' ||
    options.status === 'awaiting_approval' ||
    options.status === 'awaiting_input' ||
    options.status === 'ended'
      ? CONVERSATION_QUERIES[options.status]
      : `${OURS} AND ExecutionStatus != 'ContinuedAsNew'`,
  ];
  if (options.status === 'idle') conditions.push(`${status} = 'idle'`, `ExecutionStatus IN ('Running', 'Completed')`);
  if (options.tenant !== undefined) conditions.push(`${SearchAttribute.tenant.name} = ${quoted(options.tenant)}`);
  if (options.query?.trim()) conditions.push(`(${options.query})`);
  return conditions.join(' AND ');
}

async function isLatestRun(client: Client, execution: WorkflowExecutionInfo): Promise<boolean> {
  try {
    const latest = await client.workflow.getHandle(execution.workflowId).describe();
    return latest.runId === execution.runId;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

function toSummary(execution: WorkflowExecutionInfo): ConversationSummary {
  const attributes = execution.typedSearchAttributes;
  const recorded = attributes.get(SearchAttribute.status) as ConversationPhase | undefined;
  const executionStatus = execution.status.name;
  const tenant = attributes.get(SearchAttribute.tenant);
  return {
    conversationId:
      attributes.get(SearchAttribute.conversationId) ?? execution.workflowId.replace(/^conversation-/, ''),
    workflowId: execution.workflowId,
    runId: execution.runId,
    status: ENDED_STATUSES[executionStatus] ? 'ended' : (recorded ?? 'idle'),
    turns: attributes.get(SearchAttribute.turns) ?? 0,
    open: executionStatus === 'RUNNING',
    executionStatus,
    startTime: execution.startTime,
    ...(execution.closeTime ? { closeTime: execution.closeTime } : {}),
    ...(isCostSpend(execution.memo?.cost) ? { cost: execution.memo.cost } : {}),
    ...(tenant === undefined ? {} : { tenant }),
  };
}

/** A memo's cost as the workflow writes it (visibility.ts); anything else is left out rather than misread. */
function isCostSpend(value: unknown): value is CostSpend {
  return typeof value === 'object' && value !== null && typeof (value as CostSpend).usd === 'number';
}

/** A string literal of a visibility query. */
export function quoted(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
