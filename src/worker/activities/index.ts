import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { Client, WorkflowService } from '@temporalio/client';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { McpPool } from '../mcp/pool.js';
import type { Redactor } from '../../shared/redaction.js';
import type { CallToolInput, ModelCallInput, ModelCallResult, SummaryRequest } from '../../shared/types.js';
import { modelContextQuery, requestInputUpdate, streamSignal } from '../../workflows/definitions.js';
import type { FindEarlierRunInput } from '../../workflows/earlier-runs.js';
import type { ReadDeploymentRoutingInput } from '../../workflows/version-routing.js';
import type { DeliverScheduledMessageInput } from '../../workflows/schedule-types.js';
import { createDeploymentRoutingActivities } from './deployment-routing.js';
import { createEarlierRunActivities } from './earlier-runs.js';
import { createScheduleActivities, type ScheduledSend } from './scheduled-messages.js';
import { FinishedWork, type KeepFinishedOptions } from './outages/keep-finished.js';
import { createModelActivities, type ChatCompletionsClient } from './model/call.js';
import type { AnthropicMessagesClient } from './model/providers/anthropic.js';
import { redactModelAnswer, redactOutcome, workerSecrets } from './calls/outbound.js';
import { createToolActivities, isSafeToRepeat } from './tool-calls/call.js';
import { createTaskActivities } from './tool-calls/task-calls.js';
import type { InputPoller } from './tool-calls/input-requests.js';
import type { ToolTaskAnswerInput, ToolTaskInput } from '../../shared/tool-tasks.js';
import { RecentToolResults, type RecentToolResultsOptions } from './tool-calls/recent-results.js';
import { ToolRegistry } from '../tools/registry.js';
import type { FunctionTool } from '../tools/define-tool.js';
import type { SubAgent } from '../tools/define-sub-agent.js';
import { TranscriptCache, type TranscriptCacheOptions, type TranscriptSource } from './model/transcript-cache.js';
import { pricedModelCall } from './model/pricing.js';
import { PriceTable } from '../pricing/price-table.js';
import { checkDailyCost, createSpendActivities } from './spend.js';
import type { TenantsConfig } from '../../config/tenants.js';

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
  mcp: Pick<McpPool, 'listTools' | 'callTool'> & Partial<Pick<McpPool, 'tasks'>>;
  /** Used to read a transcript the worker has not cached from its workflow. */
  temporal: Client;
  /** Longest tool result passed to the model, in characters. Default 20,000. */
  toolResultMaxChars?: number;
  transcriptCache?: TranscriptCacheOptions;
  /**
   * The tool results kept for the next model call on this worker (each is recorded once in history, as its call's
   * result); `false` keeps none, so every model call reads a round's results from the workflow by query (the cost of
   * a model call on another worker than the tool calls'). Default: up to 64 million characters.
   */
  toolResults?: RecentToolResultsOptions | false;
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
  /**
   * How a schedule's firing sends its message (`DurableAgentClient.send` on the given task queue). The worker plugin
   * gives it; without it, a firing fails with a message that says so.
   */
  sendScheduledMessage?: ScheduledSend;
  /**
   * The operator's tenants file (`DURABLE_AGENT_TENANTS`, docs/tenants.md): a tenant's `dailyCostUsd` is checked
   * before each of its model calls. Default none: no daily limits.
   */
  tenants?: TenantsConfig;
}

/** A transcript source that asks the workflow run itself, by query. */
export function queryTranscriptSource(client: Client): TranscriptSource {
  return {
    page: (workflowId, runId, from, limit) =>
      client.workflow.getHandle(workflowId, runId).query(modelContextQuery, { from, limit }),
  };
}

export function createActivities(dependencies: ActivityDependencies) {
  const toolResults =
    dependencies.toolResults === false ? undefined : new RecentToolResults(dependencies.toolResults ?? {});
  const transcripts = new TranscriptCache(
    queryTranscriptSource(dependencies.temporal),
    dependencies.transcriptCache ?? {},
    toolResults,
  );
  const secrets = workerSecrets(dependencies);
  const tools = createToolActivities({
    pool: dependencies.mcp,
    maxResultChars: dependencies.toolResultMaxChars,
    secrets,
    functionTools:
      dependencies.tools instanceof ToolRegistry ? dependencies.tools : new ToolRegistry(dependencies.tools ?? []),
    askInput: askInputOf(dependencies.temporal),
  });
  const taskCalls = createTaskActivities({
    pool: dependencies.mcp,
    maxResultChars: dependencies.toolResultMaxChars,
    askInput: askInputOf(dependencies.temporal),
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
  const schedules = createScheduleActivities(dependencies.temporal, dependencies.sendScheduledMessage ?? cannotSend);
  // Redacted inside `finished.run`: a result kept through an outage is delivered later as it was kept.
  return {
    callModel: (input: ModelCallInput) =>
      finished.run({ size: modelResultChars, settlesRun: true, deliverFailures: true }, () =>
        redactOutcome(
          secrets,
          () =>
            checkDailyCost(dependencies.temporal, dependencies.tenants, input.dailyCost).then(() =>
              pricedModelCall(prices, input, dependencies.defaultModel, () => model.callModel(input)),
            ),
          (result) => redactModelAnswer(secrets, result),
        ),
      ),
    /**
     * A summary call of compaction (docs/models.md#compaction): a model call whose answer is the summary of the older
     * part of the transcript. An activity of its own, so the Web UI and history tell it from the turn's rounds.
     */
    summarizeTranscript: (input: ModelCallInput & { summarize: SummaryRequest }) =>
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
        () =>
          redactOutcome(secrets, () => tools.callTool(input)).then((result) => {
            // As the workflow will append it: redacted (and cut) as delivered.
            const run = toolResults === undefined ? undefined : currentRunKey();
            if (run !== undefined && result.outcome !== 'input_required' && result.outcome !== 'task') {
              toolResults?.remember(run, input, result);
            }
            return result;
          }),
      ),
    pollToolTask: (input: ToolTaskInput) => redactOutcome(secrets, () => taskCalls.pollToolTask(input)),
    toolTaskResult: (input: ToolTaskInput) =>
      redactOutcome(secrets, () => taskCalls.toolTaskResult(input)).then((result) => {
        // A task's result reaches the next model call as a call's does: from this worker, else by query.
        const run = toolResults === undefined ? undefined : currentRunKey();
        if (run !== undefined && result.kind === 'result') {
          toolResults?.remember(run, input, result.result);
        }
        return result;
      }),
    answerToolTask: (input: ToolTaskAnswerInput) => redactOutcome(secrets, () => taskCalls.answerToolTask(input)),
    cancelToolTask: (input: ToolTaskInput) => redactOutcome(secrets, () => taskCalls.cancelToolTask(input)),
    findEarlierRun: (input: FindEarlierRunInput) => redactOutcome(secrets, () => earlierRuns.findEarlierRun(input)),
    readDeploymentRouting: (input: ReadDeploymentRoutingInput) => routing.readDeploymentRouting(input),
    deliverScheduledMessage: (input: DeliverScheduledMessageInput) =>
      redactOutcome(secrets, () => schedules.deliverScheduledMessage(input)),
    ...createSpendActivities(dependencies.temporal),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { RecordSpendResult } from './spend.js';

/** A worker made without `sendScheduledMessage` cannot deliver a schedule's firing: it fails, saying why. */
const cannotSend: ScheduledSend = () =>
  Promise.reject(
    ApplicationFailure.nonRetryable(
      'This worker was created without sendScheduledMessage, so it cannot deliver scheduled messages: create it ' +
        'with durableAgentPlugin or createAgentWorker.',
      'ScheduledMessageUndeliverable',
    ),
  );
/** A server's question goes to the conversation's run by the internal `requestInput` update (docs/mcp.md). */
function askInputOf(temporal: Client): InputPoller {
  return ({ workflowId, runId }, poll, signal) =>
    temporal.withAbortSignal(signal, () =>
      temporal.workflow.getHandle(workflowId, runId).executeUpdate(requestInputUpdate, { args: [poll] }),
    );
}

/** `workflowId/runId` of the workflow run this activity works for, as the transcript cache keys its runs. */
function currentRunKey(): string | undefined {
  const execution = Context.current().info.workflowExecution;
  return execution === undefined ? undefined : `${execution.workflowId}/${execution.runId}`;
}

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
