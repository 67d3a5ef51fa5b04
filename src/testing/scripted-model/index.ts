/**
 * The scripted model: an OpenAI-compatible chat completions server that answers from a script, so that agents
 * are tested through the real `openai` client without calling a real model. Reference: docs/scripted-model.md.
 */
export { startScriptedModel, type ScriptedModel, type ScriptedModelOptions } from './server.js';
export { DEFAULT_CONVERSATION } from './cursor.js';
export type { SummaryAnswer } from './context-window.js';
export { scriptedCompactionSummary } from './context-management.js';
export { ScriptedModelErrorCode } from './response.js';
export type { RecordedRequest, RequestOptions } from './recorded-request.js';
export {
  loadScriptFile,
  validateScript,
  ScriptValidationError,
  type Script,
  type ScriptFunction,
  type ScriptStep,
  type StepFunction,
  type ContentStep,
  type ToolCallsStep,
  type ErrorStep,
  type ScriptedHttpError,
  type ScriptToolCall,
  type ScriptUsage,
  type FinishReason,
  type StepDelivery,
  type CompletionDelivery,
} from './script.js';
