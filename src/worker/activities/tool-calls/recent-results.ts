import { toolResultMessage } from '../../../shared/tool-messages.js';
import type { CallToolInput, CallToolResult, ToolMessage } from '../../../shared/types.js';

export interface RecentToolResultsOptions {
  /** Characters of tool results kept across all runs; the oldest go first. Default 64 million (about 128 MB). */
  maxChars?: number;
}

/**
 * The tool results this worker returned lately, as the transcript messages the workflow makes of them. A tool result
 * is recorded in history once, as its callTool activity's result; the next model call names it by transcript position
 * instead of carrying it again, and a model call on this worker takes it from here (./model/transcript-cache.ts). A
 * model call on another worker reads it from the workflow by query instead. Nothing here is trusted: the transcript's
 * chained digest proves each message is the one the workflow holds.
 */
export class RecentToolResults {
  private readonly messages = new Map<string, ToolMessage>();
  private totalChars = 0;
  private readonly maxChars: number;

  constructor(options: RecentToolResultsOptions = {}) {
    this.maxChars = options.maxChars ?? 64_000_000;
  }

  /** Keep the result of a call of run `runKey` (`workflowId/runId`); a result that asks questions is not one yet. */
  remember(runKey: string, input: Pick<CallToolInput, 'toolCallId' | 'tool'>, result: CallToolResult): void {
    const key = `${runKey}/${input.toolCallId}`;
    this.forget(key);
    const message = toolResultMessage({ id: input.toolCallId, name: input.tool.name }, result);
    this.messages.set(key, message);
    this.totalChars += message.content.length;
    for (const [oldest] of this.messages) {
      if (this.totalChars <= this.maxChars || this.messages.size === 1) break;
      this.forget(oldest);
    }
  }

  /** The message of call `toolCallId` of run `runKey`, if this worker ran it lately. */
  get(runKey: string, toolCallId: string): ToolMessage | undefined {
    return this.messages.get(`${runKey}/${toolCallId}`);
  }

  /** Drop what a model call took: the transcript cache holds it from now on. */
  forget(key: string): void {
    const message = this.messages.get(key);
    if (message === undefined) return;
    this.messages.delete(key);
    this.totalChars -= message.content.length;
  }

  /** Drop the message of call `toolCallId` of run `runKey`. */
  taken(runKey: string, toolCallId: string): void {
    this.forget(`${runKey}/${toolCallId}`);
  }

  get size(): number {
    return this.messages.size;
  }
}
