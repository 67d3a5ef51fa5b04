import { WorkflowNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import type { ConversationPhase } from '../workflows/definitions.js';
import { CONVERSATION_WORKFLOW_TYPE, ENDED_STATUSES } from './conversation-runs.js';
import type { ConversationSummary, ListOptions } from './types.js';

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
    seen.add(execution.workflowId);
    // A reopened conversation keeps its earlier closed runs: only the latest run speaks for it.
    if (execution.status.name !== 'RUNNING' && !(await isLatestRun(client, execution))) continue;
    summaries.push(toSummary(execution));
    if (summaries.length >= limit) break;
  }
  return summaries;
}

/** The visibility query of `list`: our workflow type, no continued-as-new runs, the state asked for, the caller's. */
function listQuery(options: ListOptions): string {
  const conditions = [`WorkflowType = '${CONVERSATION_WORKFLOW_TYPE}'`, `ExecutionStatus != 'ContinuedAsNew'`];
  const status = SearchAttribute.status.name;
  if (options.status === 'running') conditions.push(`${status} = 'running'`, `ExecutionStatus = 'Running'`);
  if (options.status === 'idle') {
    conditions.push(`${status} = 'idle'`, `ExecutionStatus IN ('Running', 'Completed')`);
  }
  if (options.status === 'ended') {
    conditions.push(`(${status} = 'ended' OR ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut', 'Canceled'))`);
  }
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
  };
}
