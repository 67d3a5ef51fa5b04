import type { Client, WorkflowService } from '@temporalio/client';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { McpPool } from '../mcp/pool.js';
import type { Redactor } from '../../shared/redaction.js';
import type { CallToolInput, ModelCallInput, ModelCallResult } from '../../shared/types.js';
import { modelContextQuery, requestInputUpdate, streamSignal } from '../../workflows/definitions.js';
import type { FindEarlierRunInput } from '../../workflows/earlier-runs.js';
import type { ReadDeploymentRoutingInput } from '../../workflows/version-routing.js';
import { createDeploymentRoutingActivities } from './deployment-routing.js';
import { createEarlierRunActivities } from './earlier-runs.js';
import { FinishedWork, type KeepFinishedOptions } from './outages/keep-finished.js';
import { createModelActivities, type ChatCompletionsClient } from './model/call.js';
import type { AnthropicMessagesClient } from './model/providers/anthropic.js';
import { redactModelAnswer, redactOutcome, workerSecrets } from './calls/outbound.js';
import { createToolActivities, isSafeToRepeat } from './tool-calls/call.js';
import { ToolRegistry } from '../tools/registry.js';
import type { FunctionTool } from '../tools/define-tool.js';
import type { SubAgent } from '../tools/define-sub-agent.js';
import { TranscriptCache, type TranscriptCacheOptions, type TranscriptSource } from './model/transcript-cache.js';
import { pricedModelCall } from './model/pricing.js';
import { PriceTable } from '../pricing/price-table.js';
import { createSpendActivities } from './spend.js';

export interface ActivityDependencies {
  /** An OpenAI client (created with `maxRetries: 0`: Temporal owns retries) or anything with the same `chat.completions.create`. */
  openai: ChatCompletionsClient | OpenAI;
  /**
   * An Anthropic client (created with `maxRetries: 0`) for models named `anthropic:…` (docs/models.md). Default: none,
   * and such a model fails the turn with a message that says what to set.
   */
  anthropic?: AnthropicMessagesClient | Anthropic;
  /** Model used when a conversation names none. */
  defaultModel: string;
  /** The worker's MCP connection pool. */
  mcp: Pick<McpPool, 'listTools' | 'callTool'>;
  /** Used to read a transcript the worker has not cached from its workflow. */
  temporal: Client;
  /** Longest tool result passed to the model, in characters. Default 20,000. */
  toolResultMaxChars?: number;
  transcriptCache?: TranscriptCacheOptions;
  /**
   * The worker's own connection (its `NativeConnection`): activity completions go through it, so it is the one asked
   * whether Temporal answers before a finished result is handed to the worker. Default: `temporal`'s connection.
   */
  workerConnection?: { workflowService: Pick<WorkflowService, 'getSystemInfo'> };
  /**
   * Limits of the results kept through a Temporal outage and of their delivery (docs/reliability.md); `false` keeps
   * none (`DURABLE_AGENT_KEEP_RESULTS=false`): no probe of the server, and a result lost in an outage runs again.
   */
  keepFinished?: KeepFinishedOptions | false;
  /**
   * The worker's secrets, redacted from everything its activities send (src/shared/redaction.ts). Default: the
   * secret-looking variables of `process.env`. Either way the model client's API key and the MCP pool's secrets are
   * added; a token registered with `secrets.add(value, label)` later is redacted from then on.
   */
  secrets?: Redactor;
  /**
   * Prices per model, for the cost each model call records (docs/cost.md). Default: the `@pydantic/genai-prices`
   * table shipped with the package, without configured prices.
   */
  prices?: PriceTable;
  /**
   * Tools written in TypeScript (`defineTool`, docs/tools.md), offered to the model beside the MCP servers' tools:
   * a registry from `createToolRegistry` (with dependencies and an approval policy) or a plain list. Sub-agents
   * (`defineSubAgent`) go here too. Default none.
   */
  tools?: ToolRegistry | readonly (FunctionTool | SubAgent)[];
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
  const secrets = workerSecrets(dependencies);
  const tools = createToolActivities({
    pool: dependencies.mcp,
    maxResultChars: dependencies.toolResultMaxChars,
    secrets,
    functionTools:
      dependencies.tools instanceof ToolRegistry ? dependencies.tools : new ToolRegistry(dependencies.tools ?? []),
    askInput: ({ workflowId, runId }, poll, signal) =>
      dependencies.temporal.withAbortSignal(signal, () =>
        dependencies.temporal.workflow.getHandle(workflowId, runId).executeUpdate(requestInputUpdate, { args: [poll] }),
      ),
  });
  const model = createModelActivities({
    openai: dependencies.openai,
    anthropic: dependencies.anthropic,
    transcripts,
    listTools: tools.listTools,
    defaultModel: dependencies.defaultModel,
    secrets,
    publish: ({ workflowId, runId }, batch) =>
      dependencies.temporal.workflow.getHandle(workflowId, runId).signal(streamSignal, batch),
  });
  const prices = dependencies.prices ?? new PriceTable();
  const { workflowService } = dependencies.workerConnection ?? dependencies.temporal;
  const finished =
    dependencies.keepFinished === false
      ? keepingNothing
      : new FinishedWork(() => workflowService.getSystemInfo({}), dependencies.temporal, dependencies.keepFinished);
  const earlierRuns = createEarlierRunActivities(dependencies.temporal);
  const routing = createDeploymentRoutingActivities(dependencies.temporal);
  // Redacted inside `finished.run`: a result kept through an outage is delivered later as it was kept.
  return {
    callModel: (input: ModelCallInput) =>
      finished.run({ size: modelResultChars, settlesRun: true, deliverFailures: true }, () =>
        redactOutcome(
          secrets,
          () => pricedModelCall(prices, input, dependencies.defaultModel, () => model.callModel(input)),
          (result) => redactModelAnswer(secrets, result),
        ),
      ),
    callTool: (input: CallToolInput) =>
      finished.run(
        {
          size: (result) => ('content' in result ? result.content.length : JSON.stringify(result).length) + 100,
          unsafeToRepeat: !isSafeToRepeat(input.tool.annotations),
        },
        () => redactOutcome(secrets, () => tools.callTool(input)),
      ),
    findEarlierRun: (input: FindEarlierRunInput) => redactOutcome(secrets, () => earlierRuns.findEarlierRun(input)),
    readDeploymentRouting: (input: ReadDeploymentRoutingInput) => routing.readDeploymentRouting(input),
    ...createSpendActivities(dependencies.temporal),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { RecordSpendResult } from './spend.js';

/** With kept results turned off, an attempt just runs. */
const keepingNothing: Pick<FinishedWork, 'run'> = { run: (_call, attempt) => attempt() };

/** Roughly the characters of a model call's result: its message, and the tool list of a turn's first call. */
function modelResultChars(result: ModelCallResult): number {
  const { content, toolCalls } = result.message;
  let chars = 200 + (content?.length ?? 0);
  for (const call of toolCalls ?? []) chars += call.name.length + call.arguments.length + call.id.length;
  if (result.turnSetup) chars += JSON.stringify(result.turnSetup).length;
  return chars;
}
