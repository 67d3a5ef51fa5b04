import type { ToolCall, ToolDefinition, ToolMessage, UnavailableServer } from '../shared/types.js';
import type { ApprovalDecision, PendingApproval } from '../shared/approval-messages.js';
import type { InputAnswer } from '../shared/input-messages.js';
import type { TurnSpend } from './budget.js';
import type { CostLedger } from './cost-budget.js';
import type { ConversationSettings } from './definitions.js';
import type { Transcript } from './transcript.js';
import type { OutputFormat } from './structured-output.js';
import type { InputRequests } from './input-requests.js';
import type { ContextWindow } from './context-window.js';
import type { RecordedTools } from './recorded-once.js';

/** Live progress of a turn, read by the status query and shown in the Web UI's current details. */
export interface TurnProgress {
  spend: TurnSpend;
  activity: string;
}

/**
 * What a turn tells its conversation as it runs. The conversation turns it into stream events, the status query and
 * the Web UI's current details; the turn itself builds none of them.
 */
export interface TurnObserver {
  /** The turn's spend or current activity changed. */
  progress(progress: TurnProgress): void;
  /** A model call (round) was scheduled. */
  modelCallStarted(round: number): void;
  /** The model call returned or failed for good; `streamedText` is the answer of a call that streamed it. */
  modelCallFinished(streamedText?: string | null): void;
  /** The turn's first model call listed its tools. */
  toolsListed(tools: ToolDefinition[], digest: string | undefined): void;
  /** The listing left out these MCP servers (it could not list them); called only when there are some. */
  serversUnavailable(servers: UnavailableServer[]): void;
  /** A tool call the model asked for is about to run (or to be answered without running). */
  toolStarted(call: ToolCall): void;
  /** A tool call has its message; `durationMs` is workflow time since the round's tool calls started. */
  toolFinished(message: ToolMessage, durationMs: number): void;
  /** Whether the user interrupted this turn. */
  interrupted(): boolean;
  /** Whether the conversation was ended (`end`): it closes after this turn. Absent: never (an agent turn). */
  ending?(): boolean;
}

/** The conversation's approvals, as a turn uses them (docs/approvals.md; the conversation's `Approvals`). */
export interface TurnApprovals {
  /** Tools a person allowed for the rest of the conversation. */
  readonly allowedTools: ReadonlySet<string>;
  /** Record a call as waiting for a person; without `tool`, a model call a cost budget holds (./budget-pause.ts). */
  request(pending: PendingApproval, tool?: ToolDefinition): void;
  /** Whether the call has been decided (and its decision not taken yet). */
  isDecided(callId: string): boolean;
  /** The call's decision, once: the turn acts on it. */
  take(callId: string): ApprovalDecision | undefined;
  /** Decide a waiting call without a person (a timeout, an interrupt). */
  decide(
    callId: string,
    fields: Pick<ApprovalDecision, 'decision'> & Partial<Pick<ApprovalDecision, 'by' | 'reason'>>,
  ): ApprovalDecision;
}

/** The calling turn's clock: paused while one of its sub-agents' calls waits for a person, as its own calls do. */
export interface WaitClock {
  pause(): void;
  resume(): void;
}

/** The conversation's copies of its sub-agents' pending calls, by the call that runs each (`SubAgentLinks`). */
export interface SubAgentApprovals {
  /** A call that runs a sub-agent started: its child's reports are accepted from now on. */
  open(parentCallId: string, clock: WaitClock): void;
  /** Whether a person decided one of the sub-agent's calls here, and it is not yet forwarded. */
  hasDecided(parentCallId: string): boolean;
  /** The decisions made here for the sub-agent, under the child's call ids. */
  takeDecided(parentCallId: string): ApprovalDecision[];
  /** Whether a person answered one of the sub-agent's questions here, and it is not yet forwarded. */
  hasAnswered(parentCallId: string): boolean;
  /** The answers given here for the sub-agent's questions, under the child's request ids. */
  takeAnswered(parentCallId: string): InputAnswer[];
  /** The sub-agent's call ended: whatever of it still waits here is over. */
  close(parentCallId: string, by: string, reason: string): void;
}

export interface TurnContext {
  conversationId: string;
  workflowId: string;
  runId: string;
  turn: number;
  messageId: string;
  transcript: Transcript;
  settings: ConversationSettings;
  /** The answer must be JSON matching this (the message's `output`, else the settings'); absent for a text answer. */
  output?: OutputFormat;
  observer: TurnObserver;
  approvals: TurnApprovals;
  /**
   * The conversation's questions from MCP servers: a turn asks those of a 2026-07-28 server (./tool-questions.ts,
   * ./task-questions.ts), and answers one `cancel` when its wait runs out.
   */
  inputs: Pick<InputRequests, 'ask' | 'answerOf' | 'answer'>;
  /** What the conversation has spent on model calls: the turn adds each call's cost to it (docs/cost.md). */
  costs: CostLedger;
  /** Where its sub-agents' approvals wait for a person (a conversation's turn); absent: they are not forwarded. */
  subAgents?: SubAgentApprovals;
  /** The tools the turn may call, by name or pattern (an agent turn's selection); absent: every tool listed. */
  toolSelection?: string[];
  /** The tool list the conversation recorded last: a listing that finds it again names it (./recorded-once.ts). */
  knownTools?: RecordedTools;
  /** Where its MCP servers' questions go (a sub-agent's: the calling conversation); absent: this run. */
  questionsTo?: { workflowId: string; runId: string };
  /**
   * A sub-agent's turn: the calling conversation's id. Its calls go to the tenant's ledger as that conversation's
   * sub-agent's (no conversation or turn of their own).
   */
  agentOf?: string;
  /** The conversation's model window, for compaction (docs/models.md#compaction); absent: the turn keeps its own. */
  contextWindow?: ContextWindow;
}
