import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as root from '../src/index.js';
import * as testing from '../src/testing/index.js';
import * as workflows from '../src/workflows/index.js';

/**
 * The public API, pinned: a name added to or dropped from an entry point must be added or dropped here too, on purpose.
 * Values are checked at run time (`Object.keys` of the module), types with the TypeScript compiler.
 */
const ROOT_VALUES = [
  'AnswerText',
  'ApprovalAlreadyDecidedError',
  'AskTimeoutError',
  'ConfigError',
  'ConversationEndedError',
  'ConversationNotFoundError',
  'ConversationRollingOverError',
  'DEFAULT_BUDGET',
  'DEFAULT_TEMPORAL_ADDRESS',
  'DurableAgentClient',
  'DurableAgentClientError',
  'EncryptionCodec',
  'EncryptionKeyNotFoundError',
  'FailureType',
  'FileTokenStore',
  'InvalidApprovalArgumentsError',
  'InputAlreadyAnsweredError',
  'InputRequestNotFoundError',
  'InvalidInputError',
  'McpAuthorizationRequiredError',
  'McpConfigError',
  'MalformedEncryptedPayloadError',
  'McpPool',
  'MessageRejectedError',
  'RedactingLogger',
  'Redactor',
  'ServeConfigError',
  'ServeErrorType',
  'PayloadDecryptionError',
  'StreamFailureType',
  'TooManyUpdatesError',
  'UnknownApprovalError',
  'connectionOptions',
  'createAgentWorker',
  'createCodecApp',
  'createOpenAIClient',
  'createServeToken',
  'createStreamingBridge',
  'installWorkerRuntime',
  'readTelemetrySettings',
  'runtimeTelemetryOptions',
  'startTelemetry',
  'encryptionDataConverter',
  'loadConfig',
  'loadMcpConfig',
  'parseEncryptionKeys',
  'runWorker',
  'serveCodec',
  'serveStreamingBridge',
  'subscribe',
  'workerDataConverter',
];

const ROOT_TYPES = [
  // Telemetry (docs/observability.md).
  'Telemetry',
  'TelemetrySettings',
  // The client's options and results.
  'AskOptions',
  'ConnectOptions',
  'ConversationStatusReport',
  'ConversationSummary',
  'ConversationTranscriptPage',
  'DurableAgentClientOptions',
  'EndedReason',
  'InputAnswerOptions',
  'ListOptions',
  'ListStatus',
  'SendOptions',
  'SendResult',
  'StartOptions',
  'StartResult',
  // Approvals (docs/approvals.md).
  'ApprovalDecision',
  'ApprovalPolicy',
  'ApprovalSettings',
  'ApproveOptions',
  'ConversationPendingApproval',
  'DenyOptions',
  'ListPendingApprovalsOptions',
  'PendingApproval',
  // Settings, results, messages.
  'AssistantMessage',
  'BudgetLimit',
  'ChatMessage',
  'ConversationPhase',
  'ConversationSettings',
  'ConversationStatus',
  'InputAnswer',
  'InputRequest',
  'StopReason',
  'TokenUsage',
  'ToolCall',
  'ToolMessage',
  'ToolOutcome',
  'TurnBudget',
  'TurnResult',
  'UserMessage',
  // The event stream and its bridge.
  'ApprovalDecidedEvent',
  'ApprovalRequestedEvent',
  'InputAnsweredEvent',
  'InputRequestedEvent',
  'ModelAttemptStartedEvent',
  'ServeBridgeOptions',
  'ServeTokenOptions',
  'ServedBridge',
  'StreamEvent',
  'StreamEventType',
  'StreamingBridge',
  'StreamingBridgeOptions',
  'SubscribeOptions',
  'TextDeltaEvent',
  'ToolCallFinishedEvent',
  'ToolCallStartedEvent',
  'TurnFinishedEvent',
  'TurnStartedEvent',
  // The worker, its MCP tools, configuration.
  'AgentWorkerOptions',
  'Config',
  'McpConfig',
  'McpPoolOptions',
  'McpServerConfig',
  'McpTokenStore',
  'RunWorkerOptions',
  'Secret',
  'StoredAuthorization',
  'TemporalConfig',
  // Encryption of payloads and the codec server.
  'CodecServerOptions',
  'EncryptionKey',
  'RunningCodecServer',
];

const TESTING_VALUES = [
  'ARGUMENT_PIECE_LENGTH',
  'CHARACTERS_PER_TOKEN',
  'DEFAULT_CONVERSATION',
  'ScriptValidationError',
  'ScriptedModelErrorCode',
  'conversationOf',
  'conversationWorkflowId',
  'createLocalEnvironment',
  'createTimeSkippingEnvironment',
  'loadScriptFile',
  'registerSearchAttributes',
  'serveMcpOverHttp',
  'sharedWorkflowBundle',
  'startScriptedModel',
  'startTestAgent',
  'startTestMcpServer',
  'validateScript',
];

const TESTING_TYPES = [
  'CompletionDelivery',
  'ContentStep',
  'ErrorStep',
  'FinishReason',
  'LocalEnvironmentOptions',
  'RecordedRequest',
  'RequestOptions',
  'RunningTestMcpServer',
  'Script',
  'ScriptFunction',
  'ScriptStep',
  'ScriptToolCall',
  'ScriptUsage',
  'ScriptedHttpError',
  'ScriptedModel',
  'ScriptedModelOptions',
  'ServedMcp',
  'StepDelivery',
  'StepFunction',
  'TestAgent',
  'TestAgentOptions',
  'TimeSkippingEnvironmentOptions',
  'ToolCallsStep',
];

const WORKFLOWS_VALUES = ['conversationWorkflow'];

const sorted = (names: string[]) => [...names].sort();

const entryPoints = ['index.ts', 'testing/index.ts', 'workflows/index.ts'].map((entryPoint) =>
  fileURLToPath(new URL(`../src/${entryPoint}`, import.meta.url)),
);
let program: ts.Program | undefined;

/** The names an entry point exports, split into values and type-only names, as the TypeScript compiler sees them. */
function exportsOf(entryPoint: string): { values: string[]; types: string[] } {
  // One program for the three entry points: building it is most of the cost.
  program ??= ts.createProgram(entryPoints, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const file = fileURLToPath(new URL(`../src/${entryPoint}`, import.meta.url));
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const values: string[] = [];
  const types: string[] = [];
  for (const symbol of checker.getExportsOfModule(module)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.getName());
  }
  return { values: values.sort(), types: types.sort() };
}

describe('the public API', () => {
  it('durable-agent exports the client, settings, results and messages, the stream, the worker and MCP, config', () => {
    expect(Object.keys(root).sort()).toEqual(sorted(ROOT_VALUES));
  });

  it('durable-agent exports these types and no others (not the workflow/activity wire format)', () => {
    const { values, types } = exportsOf('index.ts');
    expect(values).toEqual(sorted(ROOT_VALUES));
    expect(types).toEqual(sorted(ROOT_TYPES));
  });

  it('durable-agent/testing exports the testing kit', () => {
    expect(Object.keys(testing).sort()).toEqual(sorted(TESTING_VALUES));
    const { values, types } = exportsOf('testing/index.ts');
    expect(values).toEqual(sorted(TESTING_VALUES));
    expect(types).toEqual(sorted(TESTING_TYPES));
  });

  it('durable-agent/workflows exports the conversation workflow only', () => {
    expect(Object.keys(workflows).sort()).toEqual(WORKFLOWS_VALUES);
    expect(exportsOf('workflows/index.ts')).toEqual({ values: WORKFLOWS_VALUES, types: [] });
  });
});
