import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { agentWorkflowsPath, withAgentWorkflows } from '../../src/worker/plugin/workflows-module.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'workflows-module-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the joined workflows module', () => {
  it("exports the application's module whole and the agent's workflows by name, beside @temporalio/workflow", () => {
    const application = fileURLToPath(new URL('./application-workflows.ts', import.meta.url));
    const joined = withAgentWorkflows(application);
    expect(joined).toBe(withAgentWorkflows(application));
    expect(path.dirname(joined)).toBe(
      path.join(fileURLToPath(new URL('../../node_modules', import.meta.url)), '.cache', 'durable-agent'),
    );
    expect(readFileSync(joined, 'utf8')).toBe(
      `export * from ${JSON.stringify(application)};\n` +
        `export { conversationWorkflow, agentTurnWorkflow, scheduledMessageWorkflow } from ${JSON.stringify(agentWorkflowsPath)};\n`,
    );
  });

  it("the agent's own workflows module is not joined with itself", () => {
    expect(withAgentWorkflows(agentWorkflowsPath)).toBe(agentWorkflowsPath);
  });

  it('workflows with no @temporalio/workflow installed above them: an error saying what to install', () => {
    const application = path.join(scratch, 'workflows.js');
    writeFileSync(application, 'export async function orderWorkflow() {}\n');
    expect(() => withAgentWorkflows(application)).toThrow(
      /no node_modules\/@temporalio\/workflow above .*workflows\.js.*Install @temporalio\/workflow/,
    );
  });
});
