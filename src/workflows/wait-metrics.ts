import { context, trace, type Context, type Span } from '@opentelemetry/api';
import { inWorkflowContext, log, metricMeter, workflowInfo } from '@temporalio/workflow';

/**
 * Why a conversation pauses: what its wait spans and wait metrics name (docs/observability.md, "Waits"). A new kind of
 * wait is one line here and a `waitStarted` / `waitEnded` pair where it begins and ends.
 */
export const WAIT_REASONS = {
  approval: "a tool call waits for a person's approval",
  question: "an MCP server's question waits for a person's answer",
  continue_as_new: 'the run hands over to the next run (continue-as-new): new asks wait for it',
  new_version: 'the run moves to the current Worker Deployment Version (continue-as-new onto it)',
  task: 'a tool call waits for an MCP task\'s result (docs/mcp.md, "Tasks")',
} as const;

export type WaitReason = keyof typeof WAIT_REASONS;

/** A wait that began: its span, and when it began (workflow time) for a wait whose caller keeps no time of its own. */
interface OpenWait {
  span: Span;
  startedAt: number;
}

/**
 * The open waits of this workflow, by reason and key. Module state is per workflow execution in Temporal's sandbox
 * (the bundle's module cache is isolated per workflow), and replay rebuilds it as the workflow ran.
 */
const open = new Map<string, OpenWait>();
/** The running turn's context: a wait begun in an update handler (a server's question) is still the turn's child. */
let turnContext: Context | undefined;

/** Set by the turn's trace while a turn runs (turn-traces.ts); `undefined` between turns. */
export function setWaitParent(parent: Context | undefined): void {
  turnContext = parent;
}

/**
 * A wait began: counts `durable_agent.waits.started` by kind and opens its `wait <reason>` span, a child of the running
 * turn (or of the run, between turns). `key` tells apart waits of one reason open at once (a call id, a request id).
 * The workflow's metric meter records nothing while a workflow replays, and its spans leave through a sink that is not
 * called then, so a wait is counted and exported once. Outside a workflow (the rules' unit tests) nothing is recorded.
 *
 * These run inside the handlers that record a decision or an answer: a metric or span that cannot be recorded is
 * logged and left out, and never fails the handler (it did: the answer was kept but its event never written).
 */
export function waitStarted(kind: WaitReason, key: string, attributes: Record<string, string | number> = {}): void {
  if (!inWorkflowContext()) return;
  recordSafely(() => {
    metricMeter
      .createCounter('durable_agent.waits.started', '{wait}', 'Waits of the conversation that began')
      .add(1, { kind });
    const span = trace.getTracer('durable-agent').startSpan(
      `wait ${kind}`,
      {
        attributes: {
          // The conversation's id, as `conversationIdOf` reads it (not imported: definitions.ts imports this module).
          'gen_ai.conversation.id': workflowInfo().workflowId.replace(/^conversation-/, ''),
          'durable_agent.wait.reason': kind,
          ...attributes,
        },
      },
      turnContext ?? context.active(),
    );
    open.set(`${kind}:${key}`, { span, startedAt: Date.now() });
  });
}

/**
 * A wait ended: counts `durable_agent.waits.ended`, records `durable_agent.wait.duration` (seconds of workflow time
 * since `requestedAt`, ISO, when the caller kept it; else since `waitStarted`) by kind and outcome, and closes the span
 * with the outcome.
 */
export function waitEnded(
  kind: WaitReason,
  key: string,
  requestedAt: string | undefined,
  outcome: string | undefined,
): void {
  if (!inWorkflowContext()) return;
  recordSafely(() => {
    const wait = open.get(`${kind}:${key}`);
    open.delete(`${kind}:${key}`);
    metricMeter.createCounter('durable_agent.waits.ended', '{wait}', 'Waits of the conversation that ended').add(1, {
      kind,
    });
    wait?.span.setAttribute('durable_agent.wait.outcome', outcome ?? 'unknown');
    wait?.span.end();
    const since = requestedAt !== undefined ? Date.parse(requestedAt) : wait?.startedAt;
    const seconds = (Date.now() - (since ?? Number.NaN)) / 1000;
    if (!Number.isFinite(seconds)) return;
    metricMeter
      .createHistogram('durable_agent.wait.duration', 'float', 's', 'How long the conversation waited (workflow time)')
      .record(Math.max(0, seconds), { kind, outcome: outcome ?? 'unknown' });
  });
}

function recordSafely(record: () => void): void {
  try {
    record();
  } catch (error) {
    log.warn('a wait metric could not be recorded; the conversation goes on without it', { error: String(error) });
  }
}
