import { inWorkflowContext, log, metricMeter } from '@temporalio/workflow';

/**
 * What a conversation waits for: a tool call for a person's approval, a server's question for its answer, a tool
 * call for its MCP task (docs/mcp.md, "Tasks": the server, not a person, but counted the same way).
 */
export type PersonWait = 'approval' | 'question' | 'task';

/**
 * Metrics of what waits for a person (docs/observability.md): `durable_agent.waits.started` and `.ended` by kind (what
 * is pending is started minus ended) and `durable_agent.wait.duration` in seconds of workflow time, by kind and outcome.
 * The workflow's metric meter records nothing while a workflow replays, so a wait is counted once. Outside a workflow
 * (the rules' unit tests) nothing is recorded.
 *
 * These run inside the handlers that record a decision or an answer: a metric that cannot be recorded is logged and
 * left out, and never fails the handler (it did: the answer was kept but its event never written, and `chat` waited).
 */
export function waitStarted(kind: PersonWait): void {
  if (!inWorkflowContext()) return;
  recordSafely(() =>
    metricMeter
      .createCounter('durable_agent.waits.started', '{wait}', 'Waits for a person that began')
      .add(1, { kind }),
  );
}

/** A wait ended: `requestedAt` is when it began (ISO, workflow time); `outcome` the decision or answer. */
export function waitEnded(kind: PersonWait, requestedAt: string | undefined, outcome: string | undefined): void {
  if (!inWorkflowContext()) return;
  recordSafely(() => {
    metricMeter.createCounter('durable_agent.waits.ended', '{wait}', 'Waits for a person that ended').add(1, { kind });
    const seconds = (Date.now() - Date.parse(requestedAt ?? '')) / 1000;
    if (!Number.isFinite(seconds)) return;
    metricMeter
      .createHistogram('durable_agent.wait.duration', 'float', 's', 'How long a person took (workflow time)')
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
