import { setTimeout as sleep } from 'node:timers/promises';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowHandle,
  type WorkflowIdReusePolicy,
} from '@temporalio/client';
import type { Priority, SearchAttributePair } from '@temporalio/common';
import { tenantPriority, type TenantsConfig } from '../config/tenants.js';
import { errorMessage } from '../shared/errors.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import { tenantProblem } from '../shared/tenants.js';
import {
  compactionSettingProblem,
  PROVIDER_COMPACTION,
  providerCompactionProblem,
} from '../shared/provider-compaction.js';
import type { conversationWorkflow } from '../workflows/conversation.js';
import { validateMessage } from '../workflows/conversation-state.js';
import {
  conversationWorkflowId,
  type ConversationInput,
  type ConversationOutcome,
  type ConversationSettings,
  type IncomingMessage,
} from '../workflows/definitions.js';
import {
  ConversationEndedError,
  ConversationNotFoundError,
  InvalidSettingsError,
  InvalidTenantError,
  MessageRejectedError,
  type EndedReason,
} from './errors.js';

/**
 * The conversation workflow's registered name (the workflow function's name).
 * @internal
 */
export const CONVERSATION_WORKFLOW_TYPE = 'conversationWorkflow';

/** Looks before a with-start call: a run that closes between the look and the call means another look. */
const MAX_LOOKS = 3;
/** How many times to look again while the latest run is continuing as new (a moment in between two runs). */
const MAX_ROLLOVER_LOOKS = 10;

export type ConversationHandle = WorkflowHandle<typeof conversationWorkflow>;

/**
 * Where a message to a conversation goes: a new conversation, the running run, or a reopened one; or `open-or-new`, a
 * first try without looking: a new conversation or the running run, whichever Temporal finds.
 */
export type Target =
  | { kind: 'new'; input: ConversationInput }
  | { kind: 'open-or-new'; input: ConversationInput }
  | { kind: 'running'; runId: string; input: ConversationInput }
  | { kind: 'reopen'; runId: string; input: ConversationInput };

/** The workflow options of a with-start call (start, signal-with-start, update-with-start) for a target. */
export interface WithStartOptions {
  workflowId: string;
  taskQueue: string;
  args: [ConversationInput];
  workflowIdReusePolicy: WorkflowIdReusePolicy;
  workflowIdConflictPolicy: 'USE_EXISTING';
  /** A tenant's conversation: the tenant as fairness key (docs/tenants.md). Absent without a tenant. */
  priority?: Priority;
  /** A tenant's conversation: its `DurableAgentTenant` search attribute. Absent without a tenant. */
  typedSearchAttributes?: SearchAttributePair[];
}

/** Temporal's status of a closed run, as the reason the conversation takes no more messages. */
export const ENDED_STATUSES: Partial<Record<string, EndedReason>> = {
  FAILED: 'failed',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed out',
  CANCELLED: 'cancelled',
};

/**
 * A conversation's runs as the client finds them: which run is the latest and in what state, what a closed run handed
 * on, and the with-start call that reaches the right run whatever it finds.
 * @internal
 */
export class ConversationRuns {
  constructor(
    readonly client: Client,
    readonly taskQueue: string,
    /** The operator's tenants file (`DURABLE_AGENT_TENANTS`): the fairness weights of tenants' conversations. */
    readonly tenants?: TenantsConfig,
  ) {}

  /**
   * Run a with-start call against where the conversation is now (`call` gets the target and the workflow options to
   * start it with). When a run closes between the look and the call, the call finds it started or gone: look again.
   *
   * With `tryFirst`, the call is made once before any look, as for a new conversation (`open-or-new`): that reaches the
   * running run or starts the conversation, one round trip for the common case, and Temporal refuses it (already
   * started) only when the conversation has closed runs only; then the look decides as before (reopen, or ended).
   */
  async withTarget<T>(
    conversationId: string,
    settings: ConversationSettings | undefined,
    call: (target: Target, start: WithStartOptions) => Promise<T>,
    options: { mustExist?: boolean; tryFirst?: boolean } = {},
  ): Promise<T> {
    checkTenant(conversationId, settings);
    checkCostLimits(conversationId, settings);
    if (options.tryFirst && !options.mustExist) {
      const target: Target = { kind: 'open-or-new', input: newInput(conversationId, settings) };
      try {
        return await call(target, this.startOptions(target));
      } catch (error) {
        // Closed runs only, or the run closed under the call: look.
        if (!isRaced(error)) throw error;
      }
    }
    for (let look = 1; ; look++) {
      const target = await this.resolve(conversationId, settings, options);
      try {
        return await call(target, this.startOptions(target));
      } catch (error) {
        if (!isRaced(error) || look >= MAX_LOOKS) throw error;
      }
    }
  }

  /** Where a message to this conversation goes: a new conversation, the running run, or a reopened one. */
  async resolve(
    conversationId: string,
    settings: ConversationSettings | undefined,
    options: { mustExist?: boolean } = {},
  ): Promise<Target> {
    const fresh = newInput(conversationId, settings);
    for (let look = 1; ; look++) {
      let description: { runId: string; status: string };
      try {
        description = await this.describe(conversationId);
      } catch (error) {
        if (error instanceof ConversationNotFoundError && !options.mustExist) return { kind: 'new', input: fresh };
        throw error;
      }
      const { runId, status } = description;
      if (status === 'RUNNING') return { kind: 'running', runId, input: fresh };
      if (status === 'COMPLETED') return await this.reopening(conversationId, runId, settings);
      const ended = ENDED_STATUSES[status];
      if (ended) throw new ConversationEndedError(conversationId, ended);
      // CONTINUED_AS_NEW as the latest run is a moment in between: the next run is about to exist.
      if (look >= MAX_ROLLOVER_LOOKS) throw new Error(`Conversation ${conversationId}: its latest run is ${status}.`);
      await sleep(100 * look);
    }
  }

  /** The latest run's id and Temporal status. */
  async describe(conversationId: string): Promise<{ runId: string; status: string }> {
    try {
      const description = await this.handle(conversationId).describe();
      return { runId: description.runId, status: description.status.name };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(conversationId, { cause: error });
      throw error;
    }
  }

  /** The conversation's tenant, from its latest run's search attributes; undefined for a conversation without one. */
  async tenantOf(conversationId: string): Promise<string | undefined> {
    try {
      const description = await this.handle(conversationId).describe();
      return description.typedSearchAttributes.get(SearchAttribute.tenant);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(conversationId, { cause: error });
      throw error;
    }
  }

  /** What a completed run returned: why it closed and the state it hands on. */
  async outcome(conversationId: string, runId: string): Promise<ConversationOutcome> {
    const handle = this.client.workflow.getHandle<typeof conversationWorkflow>(
      conversationWorkflowId(conversationId),
      runId,
      { followRuns: false },
    );
    return await handle.result();
  }

  handle(conversationId: string, runId?: string): ConversationHandle {
    return this.client.workflow.getHandle<typeof conversationWorkflow>(conversationWorkflowId(conversationId), runId);
  }

  private startOptions(target: Target): WithStartOptions {
    return {
      workflowId: conversationWorkflowId(target.input.conversationId),
      taskQueue: this.taskQueue,
      args: [target.input],
      // Never start an empty conversation over closed runs: a closed one is reopened with its state (or is ended).
      workflowIdReusePolicy: target.kind === 'reopen' ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...this.tenantOptions(target.input.settings?.tenant),
    };
  }

  /**
   * A tenant's conversation starts with the tenant as its fairness key, which its activities and child workflows
   * inherit (and its later runs: continue-as-new keeps a run's priority and search attributes).
   */
  private tenantOptions(tenant: string | undefined): Pick<WithStartOptions, 'priority' | 'typedSearchAttributes'> {
    if (tenant === undefined) return {};
    return {
      priority: tenantPriority(tenant, this.tenants),
      typedSearchAttributes: [{ key: SearchAttribute.tenant, value: tenant }],
    };
  }

  /** A run that completed: ended for good, or closed idle and reopened with its state and settings. */
  private async reopening(
    conversationId: string,
    runId: string,
    settings: ConversationSettings | undefined,
  ): Promise<Target> {
    const outcome = await this.outcome(conversationId, runId);
    if (outcome.closedBecause === 'ended' || outcome.state.ended) {
      throw new ConversationEndedError(conversationId, 'ended');
    }
    // Every release's outcome carries the run's settings (0.1.0 on); new ones, when given, replace them.
    const reopenSettings = settings ?? outcome.settings;
    const { closeWhenIdle } = outcome;
    return {
      kind: 'reopen',
      runId,
      input: {
        conversationId,
        ...(reopenSettings ? { settings: reopenSettings } : {}),
        ...(closeWhenIdle ? { closeWhenIdle: true } : {}),
        state: outcome.state,
        previousRunId: runId,
      },
    };
  }
}

/** Refuses settings whose tenant cannot be a fairness key or a search attribute value, before anything is sent. */
function checkTenant(conversationId: string, settings: ConversationSettings | undefined): void {
  const tenant = settings?.tenant;
  if (tenant === undefined) return;
  const problem = tenantProblem(tenant);
  if (problem !== undefined) throw new InvalidTenantError(conversationId, String(tenant), problem);
}

/** Refuses a cost limit's `onCostLimit` that is neither `fail` nor `pause`, or a `pause` without a limit to pause at. */
function checkCostLimits(conversationId: string, settings: ConversationSettings | undefined): void {
  for (const [name, budget] of [
    ['budget', settings?.budget],
    ['conversationBudget', settings?.conversationBudget],
  ] as const) {
    const action: unknown = budget?.onCostLimit;
    if (action === undefined) continue;
    if (action !== 'fail' && action !== 'pause') {
      throw new InvalidSettingsError(
        conversationId,
        `${name}.onCostLimit`,
        `the setting ${name}.onCostLimit is ${JSON.stringify(action)}; expected "fail" (end the turn, the default) ` +
          'or "pause" (wait for a person)',
      );
    }
    if (action === 'pause' && budget?.maxCostUsd === undefined) {
      throw new InvalidSettingsError(
        conversationId,
        `${name}.onCostLimit`,
        `the setting ${name}.onCostLimit is "pause" but ${name}.maxCostUsd is not set; ` +
          'give the limit to pause at (US dollars)',
      );
    }
  }
}

/** A with-start call that found the conversation's runs closed, or its run closing under it. */
function isRaced(error: unknown): boolean {
  return error instanceof WorkflowExecutionAlreadyStartedError || error instanceof WorkflowNotFoundError;
}

/** The start argument of a new conversation (and of a with-start call that reaches the running run). */
function newInput(conversationId: string, settings: ConversationSettings | undefined): ConversationInput {
  const problem = settingsProblem(settings);
  if (problem !== undefined) throw new InvalidSettingsError(conversationId, 'compaction', problem);
  return { conversationId, ...(settings ? { settings } : {}) };
}

/** True when `message` passes the conversation's checks under `settings` (or the defaults). */
export function isValidMessage(message: IncomingMessage, settings: ConversationSettings | undefined): boolean {
  try {
    validateMessage(message, settings ?? {});
    return true;
  } catch {
    return false;
  }
}

/**
 * Validate a message here, before it is sent: the conversation ignores an invalid signal silently, and a conversation
 * a with-start call creates would start even when its update is rejected.
 */
export function rejectInvalidMessage(
  conversationId: string,
  message: IncomingMessage,
  settings: ConversationSettings | undefined,
): void {
  try {
    validateMessage(message, settings ?? {});
  } catch (error) {
    throw new MessageRejectedError(conversationId, errorMessage(error), { cause: error });
  }
}

/** What is wrong with a new conversation's settings that the workflow would otherwise ignore or fail each turn on. */
function settingsProblem(settings: ConversationSettings | undefined): string | undefined {
  const compaction: unknown = settings?.compaction;
  const problem = compactionSettingProblem(compaction);
  if (problem !== undefined || compaction !== PROVIDER_COMPACTION || settings?.model === undefined) return problem;
  // Without a model the worker's default decides: its first turn says so (ProviderCompactionUnsupported).
  return providerCompactionProblem(settings.model);
}
