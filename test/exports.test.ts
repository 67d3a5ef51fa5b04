import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as bridge from '../src/bridge/index.js';
import * as codec from '../src/codec/index.js';
import * as worker from '../src/worker/index.js';
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
  'DurableAgentError',
  'FailureType',
  'InvalidApprovalArgumentsError',
  'InputAlreadyAnsweredError',
  'InputRequestNotFoundError',
  'InvalidInputError',
  'InvalidSettingsError',
  'InvalidTenantError',
  'MessageRejectedError',
  'StreamFailureType',
  'TenantMismatchError',
  'TooManyUpdatesError',
  'UnknownApprovalError',
  // Schedules (docs/cli.md, "Schedules").
  'AgentSchedules',
  'InvalidScheduleError',
  'ScheduleError',
  'ScheduleExistsError',
  'ScheduleNotFoundError',
  'connectionOptions',
  'loadConfig',
  'loadTenants',
  'parseTenants',
  'subscribe',
];

const ROOT_TYPES = [
  // Telemetry (docs/observability.md).
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
  'CostSpend',
  'ConversationBudget',
  'ToolCall',
  'ToolMessage',
  'ToolOutcome',
  'TurnBudget',
  'TurnResult',
  'UserMessage',
  'SystemMessage',
  'CompactionRecord',
  // The event stream.
  'ApprovalDecidedEvent',
  'ApprovalRequestedEvent',
  'InputAnsweredEvent',
  'InputRequestedEvent',
  'ModelAttemptStartedEvent',
  'StreamEvent',
  'StreamEventType',
  'SubscribeOptions',
  'TextDeltaEvent',
  'ToolCallFinishedEvent',
  'ToolCallStartedEvent',
  'TurnFinishedEvent',
  'TurnStartedEvent',
  // Configuration and encryption keys.
  'Config',
  'TemporalConfig',
  'EncryptionKey',
  // Tenants (docs/tenants.md).
  'TenantsConfig',
  'TenantPolicy',
  'SpendOptions',
  'SpendTotals',
  // Structured output.
  'OutputFormat',
  'OutputRequest',
  // Schedules.
  'AgentScheduleSummary',
  'ScheduleCreateOptions',
  'ScheduledFiring',
  'ScheduleOverlap',
];

const WORKER_VALUES = [
  'DurableAgentPlugin',
  // Two copies of the Temporal SDK in one process, found when a worker starts.
  'DuplicateTemporalSdkError',
  // The base of every error durable-agent throws on purpose (also in the root).
  'DurableAgentError',
  'FileTokenStore',
  'McpAuthorizationRequiredError',
  'McpConfigError',
  'McpPool',
  // What McpPool.callTool throws (an unreachable server, a protocol error, a tool not configured).
  'McpProtocolError',
  'McpToolNotConfiguredError',
  'McpTransportError',
  'PriceTable',
  'RedactingLogger',
  'ToolDefinitionError',
  'ToolError',
  'ToolRegistry',
  'Redactor',
  // Temporal's rate limit per tenant on a worker's task queue (docs/tenants.md).
  'applyTenantRateLimit',
  'createAgentWorker',
  'createAnthropicClient',
  'createOpenAIClient',
  'createToolRegistry',
  'defineSubAgent',
  'defineTool',
  'durableAgentPlugin',
  'installWorkerRuntime',
  'loadMcpConfig',
  'loadPriceTable',
  'readTelemetrySettings',
  'runWorker',
  'runtimeTelemetryOptions',
  'startTelemetry',
];

const WORKER_TYPES = [
  'AgentWorkerOptions',
  'DurableAgentPluginOptions',
  'McpConfig',
  'McpPoolOptions',
  'McpServerConfig',
  'McpTokenStore',
  'ModelPrices',
  'RunWorkerOptions',
  'Secret',
  'StoredAuthorization',
  // TypeScript tools beside the MCP servers' tools.
  'FunctionTool',
  'JsonSchemaToolDefinition',
  'ToolCallContext',
  'ToolOutput',
  'ToolRegistryOptions',
  'ZodToolDefinition',
  // Sub-agents: agents as tools, each call a child workflow.
  'SubAgent',
  'SubAgentDefinition',
  'SubAgentSettings',
  'Telemetry',
  'TelemetrySettings',
  'TenantRateLimitOptions',
  'TenantRateLimitOutcome',
];

const BRIDGE_VALUES = [
  'ServeConfigError',
  'ServeErrorType',
  'createServeToken',
  'createStreamingBridge',
  'serveStreamingBridge',
];

const BRIDGE_TYPES = [
  'ServeBridgeOptions',
  'ServeTokenOptions',
  'ServedBridge',
  'StreamingBridge',
  'StreamingBridgeOptions',
];

const CODEC_VALUES = [
  'EncryptionCodec',
  'EncryptionKeyNotFoundError',
  'MalformedEncryptedPayloadError',
  'PayloadDecryptionError',
  'createCodecApp',
  'encryptionDataConverter',
  'parseEncryptionKeys',
  'serveCodec',
  'workerDataConverter',
];

const CODEC_TYPES = ['CodecServerOptions', 'EncryptionKey', 'RunningCodecServer'];

const TESTING_VALUES = [
  'DEFAULT_CONVERSATION',
  'ScriptValidationError',
  'ScriptedModelErrorCode',
  'conversationWorkflowId',
  'createLocalEnvironment',
  'createTimeSkippingEnvironment',
  'loadScriptFile',
  'registerSearchAttributes',
  'scriptedCompactionSummary',
  'serveMcpOverHttp',
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
  'SummaryAnswer',
  'TestAgent',
  'TestAgentOptions',
  'TimeSkippingEnvironmentOptions',
  'ToolCallsStep',
];

const WORKFLOWS_VALUES = [
  'agentTurnWorkflow',
  'conversationWorkflow',
  'scheduledMessageWorkflow',
  'spendLedgerWorkflow',
];
const WORKFLOWS_TYPES = ['AgentTurnInput'];

const sorted = (names: string[]) => [...names].sort();

const entryPoints = [
  'index.ts',
  'worker/index.ts',
  'bridge/index.ts',
  'codec/index.ts',
  'testing/index.ts',
  'workflows/index.ts',
].map((entryPoint) => fileURLToPath(new URL(`../src/${entryPoint}`, import.meta.url)));
let program: ts.Program | undefined;

/** The names an entry point exports, split into values and type-only names, as the TypeScript compiler sees them. */
function exportsOf(entryPoint: string): { values: string[]; types: string[] } {
  // One program for every entry point: building it is most of the cost.
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
  it('durable-agent exports the client, settings, results and messages, the stream, config and keys', () => {
    expect(Object.keys(root).sort()).toEqual(sorted(ROOT_VALUES));
  });

  it('durable-agent exports these types and no others (not the workflow/activity wire format)', () => {
    const { values, types } = exportsOf('index.ts');
    expect(values).toEqual(sorted(ROOT_VALUES));
    expect(types).toEqual(sorted(ROOT_TYPES));
  });

  it.each([
    ['worker', worker, WORKER_VALUES, WORKER_TYPES],
    ['bridge', bridge, BRIDGE_VALUES, BRIDGE_TYPES],
    ['codec', codec, CODEC_VALUES, CODEC_TYPES],
  ])('durable-agent/%s exports its role and no more', (entryPoint, module, valueNames, typeNames) => {
    expect(Object.keys(module).sort()).toEqual(sorted(valueNames));
    const { values, types } = exportsOf(`${entryPoint}/index.ts`);
    expect(values).toEqual(sorted(valueNames));
    expect(types).toEqual(sorted(typeNames));
  });

  it('durable-agent/testing exports the testing kit', () => {
    expect(Object.keys(testing).sort()).toEqual(sorted(TESTING_VALUES));
    const { values, types } = exportsOf('testing/index.ts');
    expect(values).toEqual(sorted(TESTING_VALUES));
    expect(types).toEqual(sorted(TESTING_TYPES));
  });

  it('durable-agent/workflows exports the conversation workflow and the agent turn workflow', () => {
    expect(Object.keys(workflows).sort()).toEqual(WORKFLOWS_VALUES);
    expect(exportsOf('workflows/index.ts')).toEqual({ values: WORKFLOWS_VALUES, types: WORKFLOWS_TYPES });
  });

  it('every exported error class is a DurableAgentError named after its class', () => {
    const modules = [root, worker, bridge, codec, testing];
    const errors = modules.flatMap((module) =>
      Object.entries(module).filter(([name]) => name.endsWith('Error') && name !== 'DurableAgentError'),
    );
    expect(errors.length).toBeGreaterThan(25);
    for (const [name, value] of errors) {
      expect(value, name).toSatisfy(
        (error: unknown) => (error as { prototype: unknown }).prototype instanceof root.DurableAgentError,
      );
      expect((value as { name: string }).name).toBe(name);
    }
    expect(new root.ConversationNotFoundError('c-1')).toMatchObject({ name: 'ConversationNotFoundError' });
    expect(new worker.McpAuthorizationRequiredError('web', 'no token')).toMatchObject({
      name: 'McpAuthorizationRequiredError',
    });
    expect(new root.ConfigError('bad')).toMatchObject({ name: 'ConfigError' });
  });
});
