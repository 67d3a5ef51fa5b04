import type { JsonObject } from './types.js';

/**
 * Humans in the loop: the messages of tool calls that wait for a person's approval, shared by the workflow, the client,
 * the stream and the tests. An MCP server's questions to a person are in ./input-messages.ts. See docs/approvals.md.
 */

/**
 * Which tool calls need approval: `never`, `always`, `writes` (every tool not annotated read-only), or a list of tool
 * names (as the model sees them, `<server>__<tool>`, or as on the server in the `mcpServers` file; `*` matches any run
 * of characters).
 */
export type ApprovalPolicy = 'never' | 'always' | 'writes' | string[];

/** A conversation's approval rules (`ConversationSettings.approval`). */
export interface ApprovalSettings {
  /** Overrides every MCP server's `requireApproval` for this conversation; default: each server's own. */
  require?: ApprovalPolicy;
  /**
   * How long a pending call waits for a decision, in milliseconds; default: for as long as it takes.
   * @asType integer
   * @minimum 1
   */
  timeoutMs?: number;
  /** What a timeout decides; default `deny`. */
  onTimeout?: 'deny' | 'approve';
}

/** A tool call, or a model call a cost budget stopped, that waits for a person's decision. */
export interface PendingApproval {
  /**
   * `budget` for a model call that a cost limit set to `pause` holds (docs/cost.md): `tool` then names the limit
   * (`budget:cost`, `budget:conversationCost`, `budget:dailyCost`), `server` is `budget` and `arguments` is a
   * `BudgetPause`. Absent for a tool call.
   */
  kind?: 'budget';
  /** The model's tool call id (for a budget pause, `budget-<turn>-<round>`): what `approve` and `deny` name. */
  callId: string;
  /**
   * The turn that asked for it.
   * @asType integer
   * @minimum 1
   */
  turn: number;
  /** The tool as the model named it (`<server>__<tool>`). */
  tool: string;
  /** The MCP server that would run it. */
  server: string;
  /** The arguments the model gave. */
  arguments: JsonObject;
  /** Why it needs approval, for people: which policy asked for it. */
  reason: string;
  /**
   * When it was asked for (workflow time).
   * @format date-time
   */
  requestedAt: string;
  /**
   * When a timeout will decide it, if the conversation set one.
   * @format date-time
   */
  expiresAt?: string;
}

/** What a budget pause holds (`PendingApproval.arguments` of kind `budget`): which limit, and how far it got. */
export type BudgetPause = {
  limit: 'cost' | 'conversationCost' | 'dailyCost';
  /**
   * The limit in US dollars.
   * @minimum 0
   */
  limitUsd: number;
  /**
   * What the turn, the conversation or the tenant's day spent so far.
   * @minimum 0
   */
  spentUsd: number;
  /**
   * The least the held call costs (the input of the call before, sent again).
   * @minimum 0
   */
  nextCallUsd: number;
  /** For `dailyCost`: the tenant and the UTC day. */
  tenant?: string;
  day?: string;
};

/** How a pending call was decided: the audit trail, kept in history and in the stream. */
export interface ApprovalDecision {
  callId: string;
  /**
   * @asType integer
   * @minimum 1
   */
  turn: number;
  tool: string;
  decision: 'approved' | 'denied';
  /** Who decided: the free-form identity the caller passed; `timeout` or `interrupt` when no person did. */
  by?: string;
  /** A denial's reason, given to the model in the tool message. */
  reason?: string;
  /** Arguments a person edited; the model's own stay in the transcript's tool call. */
  arguments?: JsonObject;
  /** The tool needs no approval for the rest of the conversation. */
  always?: boolean;
  /**
   * A budget pause approved with a higher limit: the limit it was raised to, in US dollars.
   * @minimum 0
   */
  maxCostUsd?: number;
  /**
   * When it was decided (workflow time).
   * @format date-time
   */
  decidedAt: string;
}

/** The argument of the `approve` update. */
export interface ApproveRequest {
  /**
   * The pending call's id (`PendingApproval.callId`).
   * @minLength 1
   */
  callId: string;
  /** Run it with these arguments instead of the model's (validated against the tool's schema). */
  arguments?: JsonObject;
  /** Allow this tool for the rest of the conversation without asking again. */
  always?: boolean;
  /**
   * For a budget pause only: raise the limit that held the call to this many US dollars (more than the limit was) for
   * the rest of the turn (`budget:cost`), the conversation (`budget:conversationCost`) or the tenant's day
   * (`budget:dailyCost`). Without it the held call goes on once and the limit stays.
   * @exclusiveMinimum 0
   */
  maxCostUsd?: number;
  /** Who decides (free-form: a user id, an e-mail, a service name), kept in history. */
  by?: string;
}

/** The argument of the `deny` update. */
export interface DenyRequest {
  /**
   * The pending call's id (`PendingApproval.callId`).
   * @minLength 1
   */
  callId: string;
  /**
   * Why, for the model: it gets it in the tool message and can adapt. Not blank.
   * @minLength 1
   * @pattern \S
   */
  reason: string;
  by?: string;
}
