import { inWorkflowContext, metricMeter } from '@temporalio/workflow';

/** What waits for a person: a tool call for its approval, a server's question for its answer. */
export type PersonWait = 'approval' | 'question';

/**
 * Metrics of what waits for a person (docs/observability.md): `durable_agent.waits.started` and `.ended` by kind (what
 * is pending is started minus ended) and `durable_agent.wait.duration` in seconds of workflow time, by kind and outcome.
 * The workflow's metric meter records nothing while a workflow replays, so a wait is counted once. Outside a workflow
 * (the rules' unit tests) nothing is recorded.
 */
export function waitStarted(kind: PersonWait): void {
  if (!inWorkflowContext()) return;
  metricMeter.createCounter('durable_agent.waits.started', '{wait}', 'Waits for a person that began').add(1, { kind });
}

/** A wait ended: `requestedAt` is when it began (ISO, workflow time); `outcome` the decision or answer. */
export function waitEnded(kind: PersonWait, requestedAt: string, outcome: string): void {
  if (!inWorkflowContext()) return;
  metricMeter.createCounter('durable_agent.waits.ended', '{wait}', 'Waits for a person that ended').add(1, { kind });
  metricMeter
    .createHistogram('durable_agent.wait.duration', 'float', 's', 'How long a person took (workflow time)')
    .record(Math.max(0, Date.now() - Date.parse(requestedAt)) / 1000, { kind, outcome });
}
