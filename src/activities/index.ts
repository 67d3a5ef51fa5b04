import type { Client } from '@temporalio/client';
import type OpenAI from 'openai';
import type { McpPool } from '../mcp/pool.js';
import type { CallToolInput, ModelCallInput } from '../shared/types.js';
import { modelContextQuery, streamSignal } from '../workflows/definitions.js';
import { createEarlierRunActivities } from './earlier-runs.js';
import { createModelActivities, type ChatCompletionsClient } from './model.js';
import { createToolActivities } from './tools.js';
import { TranscriptCache, type TranscriptCacheOptions, type TranscriptSource } from './transcript-cache.js';

export interface ActivityDependencies {
  /** An OpenAI client (created with `maxRetries: 0`: Temporal owns retries) or anything with the same `chat.completions.create`. */
  openai: ChatCompletionsClient | OpenAI;
  /** Model used when a conversation names none. */
  defaultModel: string;
  /** The worker's MCP connection pool. */
  mcp: Pick<McpPool, 'listTools' | 'callTool'>;
  /** Used to read a transcript the worker has not cached from its workflow. */
  temporal: Client;
  /** Longest tool result passed to the model, in characters. Default 20,000. */
  toolResultMaxChars?: number;
  transcriptCache?: TranscriptCacheOptions;
}

/** A transcript source that asks the workflow run itself, by query. */
export function queryTranscriptSource(client: Client): TranscriptSource {
  return {
    page: (workflowId, runId, from, limit) =>
      client.workflow.getHandle(workflowId, runId).query(modelContextQuery, { from, limit }),
  };
}

export function createActivities(dependencies: ActivityDependencies) {
  const transcripts = new TranscriptCache(
    queryTranscriptSource(dependencies.temporal),
    dependencies.transcriptCache ?? {},
  );
  const tools = createToolActivities({ pool: dependencies.mcp, maxResultChars: dependencies.toolResultMaxChars });
  const model = createModelActivities({
    openai: dependencies.openai,
    transcripts,
    listTools: tools.listTools,
    defaultModel: dependencies.defaultModel,
    publish: ({ workflowId, runId }, batch) =>
      dependencies.temporal.workflow.getHandle(workflowId, runId).signal(streamSignal, batch),
  });
  return {
    callModel: (input: ModelCallInput) => model.callModel(input),
    callTool: (input: CallToolInput) => tools.callTool(input),
    ...createEarlierRunActivities(dependencies.temporal),
  };
}

export type Activities = ReturnType<typeof createActivities>;
