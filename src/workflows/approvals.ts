import { type ApplicationFailure, inWorkflowContext, log } from '@temporalio/workflow';
import { expectedFailure, FailureType } from '../shared/errors.js';
import type { JsonObject, ToolDefinition } from '../shared/types.js';
import type {
  ApprovalDecision,
  ApproveRequest,
  BudgetPause,
  DenyRequest,
  PendingApproval,
} from '../shared/approval-messages.js';
import { argumentErrors } from './argument-schema.js';
import { RecentIds } from './conversation-state.js';
import type { EventLog } from './stream-events.js';
import type { TurnApprovals } from './turn-context.js';
import { waitEnded, waitStarted } from './wait-metrics.js';

/** Decided call ids remembered so a late second decision is told `AlreadyDecided`, not `UnknownApproval`. */
const REMEMBERED_DECISIONS = 1_000;

interface Waiting {
  pending: PendingApproval;
  /** The tool's input schema: edited arguments are checked against it. Absent for a budget pause. */
  inputSchema?: JsonObject;
}

/**
 * The conversation's tool calls that wait for a person (docs/approvals.md): what is pending, the decisions the
 * `approve` and `deny` updates (or a timeout, or an interrupt) make, and the tools a person allowed for the rest of the
 * conversation (carried across continue-as-new). The turn asks and waits; the updates decide; each decision is logged,
 * streamed (`approval_decided`) and returned by its update, so it is in history with who decided and when.
 */
export class Approvals implements TurnApprovals {
  private readonly waiting = new Map<string, Waiting>();
  /** Decisions the turn has not picked up yet, by call id. */
  private readonly decisions = new Map<string, ApprovalDecision>();
  private readonly decided: RecentIds;
  private readonly allowed: Set<string>;

  constructor(
    allowedTools: readonly string[] | undefined,
    private readonly events: EventLog,
    /** The pending calls changed: the phase and the current details may have too (the conversation's hooks). */
    private readonly hooks: { changed(): void; approvalsChanged?(): void },
  ) {
    this.allowed = new Set(allowedTools ?? []);
    this.decided = new RecentIds([], REMEMBERED_DECISIONS);
  }

  /** The calls waiting for a decision, in the order they were asked for. */
  get pending(): PendingApproval[] {
    return [...this.waiting.values()].map(({ pending }) => pending);
  }

  get allowedTools(): ReadonlySet<string> {
    return this.allowed;
  }

  /** The tools allowed for the rest of the conversation, for the next run's state; nothing when none. */
  carried(): { allowedTools?: string[] } {
    return this.allowed.size > 0 ? { allowedTools: [...this.allowed] } : {};
  }

  private changed(): void {
    if (this.hooks.approvalsChanged) this.hooks.approvalsChanged();
    else this.hooks.changed();
  }

  /** Record a call as waiting; `tool` is absent for a budget pause (a held model call, ./budget-pause.ts). */
  request(pending: PendingApproval, tool?: ToolDefinition): void {
    this.decisions.delete(pending.callId);
    this.waiting.set(pending.callId, { pending, ...(tool ? { inputSchema: tool.inputSchema } : {}) });
    this.events.append({ type: 'approval_requested', ...pending });
    info('tool call awaits approval', { callId: pending.callId, tool: pending.tool, reason: pending.reason });
    waitStarted('approval', pending.callId, {
      'gen_ai.tool.call.id': pending.callId,
      'gen_ai.tool.name': pending.tool,
      'durable_agent.turn': pending.turn,
    });
    this.changed();
  }

  /** The decision of `callId`, once made; the turn takes it (it is forgotten here, but the id stays decided). */
  take(callId: string): ApprovalDecision | undefined {
    const decision = this.decisions.get(callId);
    if (decision !== undefined) this.decisions.delete(callId);
    return decision;
  }

  isDecided(callId: string): boolean {
    return this.decisions.has(callId);
  }

  /** The `approve` update's validator: the call waits, and edited arguments match the tool's schema. */
  validateApprove(request: ApproveRequest): void {
    const { inputSchema, pending } = this.open(request, 'approve');
    if (pending.kind === 'budget') return validateRaise(request, pending);
    if (request.maxCostUsd !== undefined) {
      throw invalid(`"maxCostUsd" raises a budget that holds a model call; ${request.callId} is a tool call.`);
    }
    if (request.always !== undefined && typeof request.always !== 'boolean') {
      throw invalid(`"always" must be true or false, got ${JSON.stringify(request.always)}.`);
    }
    if (request.arguments === undefined) return;
    const edited: unknown = request.arguments;
    if (edited === null || typeof edited !== 'object' || Array.isArray(edited)) {
      throw invalid(`the edited arguments of ${request.callId} must be a JSON object.`);
    }
    const errors = argumentErrors(inputSchema!, request.arguments);
    if (errors.length > 0) {
      const tool = this.waiting.get(request.callId)!.pending.tool;
      throw invalid(
        `the edited arguments of ${request.callId} do not match the input schema of ${tool}: ${errors.join('; ')}. ` +
          'Nothing was decided: approve again with arguments that match, or without arguments to keep the model’s.',
      );
    }
  }

  /** The `deny` update's validator: the call waits, and there is a reason for the model. */
  validateDeny(request: DenyRequest): void {
    this.open(request, 'deny');
    if (typeof request.reason !== 'string' || request.reason.trim() === '') {
      throw invalid('a denial needs a reason (the model gets it and can adapt): pass a non-empty "reason".');
    }
  }

  /**
   * The `approve` update. With `always`, the other calls of the same tool that wait now are approved too (by the same
   * person, with the model's arguments): the person said this tool needs no asking.
   */
  approve(request: ApproveRequest): ApprovalDecision {
    this.validateApprove(request);
    const by = request.by !== undefined ? { by: request.by } : {};
    const decision = this.decide(request.callId, {
      decision: 'approved',
      ...by,
      ...(request.arguments !== undefined ? { arguments: request.arguments } : {}),
      ...(request.always === true ? { always: true } : {}),
      ...(request.maxCostUsd !== undefined ? { maxCostUsd: request.maxCostUsd } : {}),
    });
    if (decision.always === true) {
      const sameTool = this.pending.filter((pending) => pending.tool === decision.tool);
      for (const { callId } of sameTool) this.decide(callId, { decision: 'approved', ...by });
    }
    return decision;
  }

  /** The `deny` update. */
  deny(request: DenyRequest): ApprovalDecision {
    this.validateDeny(request);
    return this.decide(request.callId, {
      decision: 'denied',
      reason: request.reason,
      ...(request.by !== undefined ? { by: request.by } : {}),
    });
  }

  /** A decision nobody made in person: `by` is `timeout` or `interrupt`. */
  decide(
    callId: string,
    fields: Pick<ApprovalDecision, 'decision'> &
      Partial<Pick<ApprovalDecision, 'by' | 'reason' | 'arguments' | 'always' | 'maxCostUsd'>>,
  ): ApprovalDecision {
    const { pending } = this.waiting.get(callId)!;
    const decision: ApprovalDecision = {
      callId,
      turn: pending.turn,
      tool: pending.tool,
      ...fields,
      // Workflow time: the same on replay.
      decidedAt: new Date(Date.now()).toISOString(),
    };
    this.waiting.delete(callId);
    this.decisions.set(callId, decision);
    this.decided.add(callId);
    if (decision.always === true) this.allowed.add(pending.tool);
    this.events.append({ type: 'approval_decided', ...decision });
    info('tool call decided', { ...decision });
    waitEnded('approval', callId, pending.requestedAt, decision.by === 'timeout' ? 'timeout' : decision.decision);
    this.changed();
    return decision;
  }

  /** The pending call a request names, or the named failure that refuses it. */
  private open(request: { callId?: unknown }, update: 'approve' | 'deny'): Waiting {
    const { callId } = request;
    if (typeof callId !== 'string' || callId === '') {
      throw invalid(`${update} needs the "callId" of a pending tool call.`);
    }
    const waiting = this.waiting.get(callId);
    if (waiting !== undefined) return waiting;
    if (this.decided.has(callId)) {
      throw expectedFailure({
        type: FailureType.AlreadyDecided,
        nonRetryable: true,
        message: `The tool call ${callId} was decided already; nothing changed. Its decision is in the stream and the log.`,
      });
    }
    const waitingIds = [...this.waiting.keys()];
    throw expectedFailure({
      type: FailureType.UnknownApproval,
      nonRetryable: true,
      message:
        `No tool call ${callId} waits for approval in this conversation; nothing changed. ` +
        (waitingIds.length > 0 ? `Waiting: ${waitingIds.join(', ')}.` : 'None waits now.'),
    });
  }
}

/** A budget pause's approval: no arguments, no `always`, and a raised limit above the one that held the call. */
function validateRaise(request: ApproveRequest, pending: PendingApproval): void {
  if (request.arguments !== undefined || request.always !== undefined) {
    throw invalid(
      `${request.callId} is a model call held by a cost budget: approve it as it is, or with "maxCostUsd" to raise ` +
        'the limit ("arguments" and "always" are for tool calls).',
    );
  }
  const { maxCostUsd } = request;
  if (maxCostUsd === undefined) return;
  const { limitUsd } = pending.arguments as BudgetPause;
  if (typeof maxCostUsd !== 'number' || !Number.isFinite(maxCostUsd) || maxCostUsd <= limitUsd) {
    throw invalid(
      `"maxCostUsd" is ${JSON.stringify(maxCostUsd)}; expected a number of US dollars above the limit that held the ` +
        `call (${limitUsd}). Nothing was decided: approve without it to let the call go on once.`,
    );
  }
}

/** Log from the workflow (unit tests run this class without one). */
function info(message: string, attributes: Record<string, unknown>): void {
  if (inWorkflowContext()) log.info(message, attributes);
}

function invalid(message: string): ApplicationFailure {
  return expectedFailure({ type: FailureType.InvalidArguments, nonRetryable: true, message });
}
