import { randomUUID } from 'node:crypto';

/**
 * What the time-skipping test server does while its class archive is recorded (test-server.ts): one workflow run as a
 * worker drives it, through the workflow service's own calls, so that the archive also holds the classes of the calls
 * every test makes (start, polls, completions, an activity with a heartbeat, a timer, a signal, the history) and not
 * only those of the server's start. No worker or workflow bundle is needed: the server cannot tell these calls from
 * an SDK worker's. The archive only makes starts cheaper, so whatever this gets through is kept; it throws on the first
 * call that fails, and the caller records the archive anyway.
 */
export async function driveOneWorkflow(address: string): Promise<void> {
  const [{ Connection }, { msToTs }, { default: proto }] = await Promise.all([
    import('@temporalio/client'),
    import('@temporalio/common'),
    import('@temporalio/proto'),
  ]);
  const { CommandType } = proto.temporal.api.enums.v1;
  const connection = await Connection.connect({ address, connectTimeout: 10_000 });
  try {
    const service = connection.workflowService;
    const namespace = 'default';
    const taskQueue = { name: 'class-archive-training' };
    const workflowId = `class-archive-training-${randomUUID()}`;
    const identity = 'durable-agent provisioning';
    const call = <T>(fn: () => Promise<T>) => connection.withDeadline(Date.now() + 10_000, fn);
    type Commands = Parameters<typeof service.respondWorkflowTaskCompleted>[0]['commands'];
    /** Poll the workflow task the last call made, and complete it with `commands`. */
    const completeWorkflowTask = async (commands: Commands) => {
      const task = await call(() => service.pollWorkflowTaskQueue({ namespace, taskQueue, identity }));
      await call(() =>
        service.respondWorkflowTaskCompleted({ namespace, taskToken: task.taskToken, identity, commands }),
      );
    };

    const { runId } = await call(() =>
      service.startWorkflowExecution({
        namespace,
        workflowId,
        workflowType: { name: 'training' },
        taskQueue,
        requestId: randomUUID(),
        workflowRunTimeout: msToTs('1 minute'),
      }),
    );
    const execution = { workflowId, runId };
    await completeWorkflowTask([
      {
        commandType: CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
        scheduleActivityTaskCommandAttributes: {
          activityId: '1',
          activityType: { name: 'training' },
          taskQueue,
          startToCloseTimeout: msToTs('30 s'),
          heartbeatTimeout: msToTs('10 s'),
        },
      },
      {
        commandType: CommandType.COMMAND_TYPE_START_TIMER,
        startTimerCommandAttributes: { timerId: '1', startToFireTimeout: msToTs('10 minutes') },
      },
    ]);
    const activity = await call(() => service.pollActivityTaskQueue({ namespace, taskQueue, identity }));
    await call(() => service.recordActivityTaskHeartbeat({ namespace, taskToken: activity.taskToken, identity }));
    await call(() => service.respondActivityTaskCompleted({ namespace, taskToken: activity.taskToken, identity }));
    await call(() =>
      service.signalWorkflowExecution({
        namespace,
        workflowExecution: execution,
        signalName: 'training',
        identity,
        requestId: randomUUID(),
      }),
    );
    await completeWorkflowTask([
      {
        commandType: CommandType.COMMAND_TYPE_CANCEL_TIMER,
        cancelTimerCommandAttributes: { timerId: '1' },
      },
      {
        commandType: CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
        completeWorkflowExecutionCommandAttributes: {},
      },
    ]);
    await call(() => service.describeWorkflowExecution({ namespace, execution }));
    await call(() => service.getWorkflowExecutionHistory({ namespace, execution }));
  } finally {
    await connection.close();
  }
}
