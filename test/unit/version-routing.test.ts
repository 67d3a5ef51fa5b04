import { describe, expect, it } from 'vitest';
import { canShutDown, pinnedConversationsQuery } from '../../src/client/deployments.js';
import { shouldMove } from '../../src/workflows/version-routing.js';

const a = { deploymentName: 'agent', buildId: 'A' };
const b = { deploymentName: 'agent', buildId: 'B' };

describe('shouldMove', () => {
  it('version routing: a run stays on its version while that version is current', () => {
    expect(shouldMove(a, { current: a })).toBe(false);
  });

  it('version routing: a run moves once another version is current', () => {
    expect(shouldMove(a, { current: b })).toBe(true);
  });

  it('version routing: during a ramp, runs on the current and on the ramping version both stay', () => {
    expect(shouldMove(a, { current: a, ramping: b })).toBe(false);
    expect(shouldMove(b, { current: a, ramping: b })).toBe(false);
    expect(shouldMove({ deploymentName: 'agent', buildId: 'C' }, { current: a, ramping: b })).toBe(true);
  });

  it('version routing: a run moves when no version is current (new runs go to unversioned workers)', () => {
    expect(shouldMove(a, {})).toBe(true);
  });

  it('version routing: the same build id in another deployment is another version', () => {
    expect(shouldMove(a, { current: { deploymentName: 'other', buildId: 'A' } })).toBe(true);
  });
});

describe('deployments', () => {
  it('deployments: a version can be shut down only when drained (or never current) with no open pinned run', () => {
    expect(canShutDown('drained', 0)).toBe(true);
    expect(canShutDown('inactive', 0)).toBe(true);
    expect(canShutDown('drained', 1)).toBe(false);
    expect(canShutDown('draining', 0)).toBe(false);
    expect(canShutDown('current', 0)).toBe(false);
    expect(canShutDown('ramping', 0)).toBe(false);
  });

  it('deployments: counts open, pinned conversation runs of one version, quoting what it is given', () => {
    expect(pinnedConversationsQuery('agent', "0.2.0+1a2b'")).toBe(
      "WorkflowType = 'conversationWorkflow' AND ExecutionStatus = 'Running' AND " +
        "TemporalWorkflowVersioningBehavior = 'Pinned' AND TemporalWorkerDeploymentVersion = 'agent:0.2.0+1a2b\\''",
    );
  });
});
