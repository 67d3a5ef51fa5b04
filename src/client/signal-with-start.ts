import type { Client, WorkflowClient } from '@temporalio/client';

type SignalWithStartOptions = Parameters<WorkflowClient['signalWithStart']>[1];
type WorkflowService = Client['workflowService'];

/**
 * Signal-with-start that also says whether it started a run. Temporal's answer says so (`started`), but the SDK passes
 * on only the run id; knowing it lets a message go in one call, without first looking whether the conversation is
 * open. The call is the SDK's own (its encoding, codecs and interceptors), made through a view of the client whose
 * workflow service keeps that field of the answer.
 * @internal
 */
export async function signalWithStartReportingStart(
  client: Client,
  workflowType: string,
  options: SignalWithStartOptions,
): Promise<{ runId: string; started: boolean }> {
  let started = false;
  const service = client.workflow.workflowService;
  const observed = new Proxy(service, {
    get(target, property, receiver) {
      if (property !== 'signalWithStartWorkflowExecution') return Reflect.get(target, property, receiver) as unknown;
      return async (request: Parameters<WorkflowService['signalWithStartWorkflowExecution']>[0]) => {
        const response = await target.signalWithStartWorkflowExecution(request);
        started = response.started === true;
        return response;
      };
    },
  });
  const workflow = Object.create(client.workflow, { workflowService: { value: observed } }) as WorkflowClient;
  const handle = await workflow.signalWithStart(workflowType, options);
  return { runId: handle.signaledRunId, started };
}

/**
 * Whether the server's signal-with-start answer says `started` at all. Every Temporal Server release does (and reports
 * its version); the time-skipping test server answers with the run id alone, so there a `false` means nothing and the
 * caller must look first. Asked once per client.
 * @internal
 */
export async function reportsStarted(client: Client): Promise<boolean> {
  try {
    const info = await client.workflowService.getSystemInfo({});
    return Boolean(info.serverVersion);
  } catch {
    // Not answered: look first, as for a server that does not say.
    return false;
  }
}
