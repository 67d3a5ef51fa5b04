import type { ActivityInput, Next, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { interceptors } from '../../bench/contenders/no-heartbeat-timeout.js';

describe('the no-heartbeat-timeout experiment', () => {
  it('schedules every activity without a heartbeat timeout, and with every other option as the workflow set it', async () => {
    const [outbound] = interceptors().outbound as WorkflowOutboundCallsInterceptor[];
    const scheduled: ActivityInput[] = [];
    const next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'> = async (input) => {
      scheduled.push(input);
      return 'result';
    };
    const options = { heartbeatTimeout: '6s', startToCloseTimeout: '5m', retry: { maximumAttempts: 3 } } as const;
    const input = { activityType: 'callTool', args: [{ a: 1 }], options, headers: {}, seq: 7 } as ActivityInput;
    expect(await outbound!.scheduleActivity!(input, next)).toBe('result');
    expect(scheduled).toEqual([
      { ...input, options: { heartbeatTimeout: undefined, startToCloseTimeout: '5m', retry: { maximumAttempts: 3 } } },
    ]);
    // The workflow's own options are left as they were.
    expect(options.heartbeatTimeout).toBe('6s');
  });
});
