import { Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import { trimToContext } from '../../../shared/context.js';
import {
  isSummary,
  modelView,
  summaryMessage,
  summaryRequestText,
  SUMMARY_INSTRUCTION,
} from '../../../shared/compaction.js';
import { CHARS_PER_TOKEN } from '../../../shared/context.js';
import { toolsDigest } from '../../../shared/digest.js';
import { expectedFailure, FailureType } from '../../../shared/errors.js';
import { fromLatestProviderCompaction, providerCompactionProblem } from '../../../shared/provider-compaction.js';
import { selectTools } from '../../../shared/tool-patterns.js';
import type { ChatMessage, ModelCallInput, ModelCallResult, SummaryRequest } from '../../../shared/types.js';
import { streamSignal } from '../../../workflows/definitions.js';
import { DEFAULT_MODEL_ATTEMPTS, errorAttemptsAllowed } from '../../../workflows/attempts.js';
import type { ToolListing } from '../../mcp/pool.js';
import type { Redactor } from '../../../shared/redaction.js';
import { countingFailedAttempts } from '../calls/attempts.js';
import { AttemptHeartbeat } from '../calls/heartbeat.js';
import { redactModelAnswer } from '../calls/outbound.js';
import { checkModelResult, fitModelAnswer, fitToolListOnce } from '../calls/payload-limits.js';
import { TextPublisher, type StreamPublisher } from './text-publisher.js';
import { ToolOffers } from './tool-limits.js';
import type { TranscriptCache } from './transcript-cache.js';
import type { ChatCompletionsClient } from './providers/chat-completions.js';
import { ModelProviders, type ProviderClients } from './providers/index.js';

export {
  assembleCompletion,
  fromOpenAICompletion,
  toOpenAIMessage,
  toOpenAITool,
  type ChatCompletionsClient,
} from './providers/chat-completions.js';

export interface ModelActivityDependencies extends ProviderClients {
  openai: ChatCompletionsClient | OpenAI;
  transcripts: TranscriptCache;
  /**
   * Lists the tools of every MCP server, for a call with `listTools` (the turn's first), and the servers left out
   * because they could not be listed. Default: no tools.
   */
  listTools?: () => Promise<ToolListing>;
  /** Model used when the conversation names none. */
  defaultModel: string;
  /** Delivers streamed text to the workflow; default: signals through the activity context's Temporal client. */
  publish?: StreamPublisher;
  /** Least time between two text batches of one model call, after the first (sent at once). Default 250 ms. */
  streamIntervalMs?: number;
  /**
   * The worker's secrets (src/shared/redaction.ts): redacted from the tools listed, the streamed text and the answer
   * the worker caches, so they match what history records. Default: none (the caller redacts the result).
   */
  secrets?: Redactor;
}

/** The idempotency key of a model call: the scripted model server and providers use it to recognise a retry. */
export function idempotencyKey(
  input: Pick<ModelCallInput, 'workflowId' | 'runId' | 'turn' | 'round' | 'summarize'>,
): string {
  const key = `${input.workflowId}/${input.runId}/turn-${input.turn}/round-${input.round}`;
  // A summary call is made before the round's own call: its key says which (the scripted model reads it).
  return input.summarize ? `${key}/compaction-${input.summarize.index}` : key;
}

/** The messages of a summary call: the instruction, and the part to summarize as text (src/shared/compaction.ts). */
function summaryRequest(messages: readonly ChatMessage[], request: SummaryRequest): ChatMessage[] {
  const previous = request.previous === undefined ? undefined : (messages[request.previous]?.content ?? undefined);
  const part = messages.slice(request.from, request.to).filter((message) => !isSummary(message));
  const maxChars = request.maxInputTokens * CHARS_PER_TOKEN - SUMMARY_INSTRUCTION.length;
  return [
    { role: 'system', content: SUMMARY_INSTRUCTION },
    { role: 'user', content: summaryRequestText(previous, part, maxChars) },
  ];
}

export function createModelActivities(dependencies: ModelActivityDependencies) {
  const { transcripts, defaultModel, secrets } = dependencies;
  const fitToolList = fitToolListOnce();
  const listTools = dependencies.listTools ?? (async (): Promise<ToolListing> => ({ tools: [], unavailable: [] }));
  const providers = new ModelProviders(dependencies);
  const toolOffers = new Map<string, ToolOffers>();

  const oneAttempt = {
    async callModel(input: ModelCallInput): Promise<ModelCallResult> {
      const context = Context.current();
      const [resolved, listed] = await Promise.all([
        transcripts.resolve(input),
        // The list is recorded in this call's result: cut to what a Temporal payload may carry before it is offered.
        input.listTools
          ? listTools().then((listing) => {
              const offered = input.toolSelection ? selectTools(listing.tools, input.toolSelection) : listing.tools;
              return { ...listing, tools: fitToolList(secrets?.value(offered) ?? offered, context.log) };
            })
          : undefined,
      ]);
      const { summarize } = input;
      // The model sees the latest summary in place of what it summarized; a summary call sees its part as text.
      const messages = summarize ? summaryRequest(resolved.messages, summarize) : modelView(resolved.messages);
      let { tools } = summarize ? { tools: [] } : resolved;
      if (listed !== undefined) {
        tools = listed.tools;
        transcripts.rememberTools(input, listed.tools);
      }
      // Chosen per call, so a conversation may switch model or provider between turns.
      const { provider, model } = providers.choose(input.model ?? defaultModel);
      // Trimmed as sent: from the provider's latest compaction item on, which trimming keeps (../../../shared/context.ts).
      const sent = provider.nativeCompaction
        ? fromLatestProviderCompaction(messages, provider.nativeCompaction)
        : messages;
      const trimmed = trimToContext(sent, input.maxInputTokens);
      if (input.providerCompaction && !provider.nativeCompaction) {
        throw expectedFailure({
          type: FailureType.ProviderCompactionUnsupported,
          nonRetryable: true,
          message: providerCompactionProblem(input.model ?? defaultModel) ?? `${provider.name} cannot compact.`,
        });
      }
      let offers = toolOffers.get(provider.name);
      if (offers === undefined) toolOffers.set(provider.name, (offers = new ToolOffers(provider.toolLimits)));
      // Fitted to the API's limits for the request only: the turn records the servers' own definitions.
      const offered = offers.offer(tools, context.log);
      const publisher = input.stream
        ? new TextPublisher({
            publish: dependencies.publish ?? contextPublisher(context),
            target: { workflowId: input.workflowId, runId: input.runId },
            batch: { turn: input.turn, round: input.round, attempt: context.info.attempt },
            intervalMs: dependencies.streamIntervalMs,
            log: context.log,
            redactor: secrets,
          })
        : undefined;

      // A request sent for an attempt Temporal has timed out (its heartbeats did not get through while the transcript was
      // rebuilt, e.g. in an outage) is paid for and never used: the retry sends its own.
      await AttemptHeartbeat.of(context).confirmRunning();
      let answer: ModelCallResult;
      try {
        // A retry tells subscribers at once that the text they have for this round is to be replaced.
        if (publisher && context.info.attempt > 1) publisher.announce();
        answer = await provider.call({
          model,
          messages: trimmed.messages,
          instruction: input.instruction,
          tools: offered,
          toolChoice: input.toolChoice,
          temperature: input.temperature,
          maxCompletionTokens: input.maxCompletionTokens,
          thinking: input.thinking,
          responseFormat: input.responseFormat,
          ...(input.providerCompaction ? { providerCompaction: input.providerCompaction } : {}),
          idempotencyKey: idempotencyKey(input),
          signal: context.cancellationSignal,
          ...(publisher ? { onText: (text: string) => publisher.add(text) } : {}),
        });
        await publisher?.close();
      } catch (error) {
        publisher?.abandon();
        // Cancelled (interrupt or the turn's time limit): report the cancellation itself, not the aborted request.
        if (context.cancellationSignal.aborted) throw (context.cancellationSignal.reason as unknown) ?? error;
        throw provider.toFailure(error, offered);
      }

      // Bounded like every activity result (src/shared/payload-limits.ts): an endpoint may send megabytes.
      const result = fitModelAnswer(secrets ? redactModelAnswer(secrets, answer) : answer, context.log);
      const full: ModelCallResult =
        listed === undefined
          ? result
          : {
              ...result,
              turnSetup: {
                // The list the conversation recorded last is named, not recorded again (docs/architecture.md, "Each
                // byte once in history").
                ...(input.knownToolsDigest !== undefined && toolsDigest(listed.tools) === input.knownToolsDigest
                  ? { toolsDigest: input.knownToolsDigest }
                  : { tools: listed.tools }),
                model: defaultModel,
                ...(listed.unavailable.length > 0 ? { unavailableServers: listed.unavailable } : {}),
              },
            };
      checkModelResult(full);
      // A summary call's answer becomes the summary message the workflow appends.
      transcripts.remember(
        input,
        summarize ? summaryMessage(result.message.content ?? '', summarize.record) : result.message,
      );
      return full;
    },
  };
  return {
    /** One model call; an attempt that fails with an error counts against `modelAttempts` (see ../calls/attempts.ts). */
    callModel: (input: ModelCallInput): Promise<ModelCallResult> =>
      countingFailedAttempts(errorAttemptsAllowed(input.modelAttempts, DEFAULT_MODEL_ATTEMPTS), () =>
        // From the attempt's first moment, not from its request: rebuilding the transcript (a query) and listing the
        // tools take time too, and an attempt that does not heartbeat meanwhile is timed out and run again.
        AttemptHeartbeat.of().during(oneAttempt.callModel(input)),
      ),
  };
}

/** Publishes through the Temporal client of the worker running this activity. */
function contextPublisher(context: Context): StreamPublisher {
  return ({ workflowId, runId }, batch) =>
    context.client.workflow.getHandle(workflowId, runId).signal(streamSignal, batch);
}
