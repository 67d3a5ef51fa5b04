import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The workflows module: `.ts` when running from source (tests), `.js` once built. */
export const agentWorkflowsPath = new URL(
  `../../workflows/index${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
).pathname;

/**
 * The workflow types durable-agent registers. Exported by name, not with `export *`: a name that the application's
 * module exports too would otherwise drop out of the bundle silently (ECMAScript leaves an ambiguous star export out).
 */
export const AGENT_WORKFLOW_NAMES = ['conversationWorkflow', 'agentTurnWorkflow', 'scheduledMessageWorkflow'] as const;

/**
 * A workflows module that exports the application's workflows and durable-agent's, for a worker that runs both.
 * Temporal bundles one module per worker, so the two are joined in a small generated file: it is named by a digest
 * of what it says (every worker of a process that joins the same paths shares one file, and writing it again is
 * harmless), and lives in the cache folder of the `node_modules` that the application's workflows load
 * `@temporalio/workflow` from: the bundle's entry point is placed beside it and must load the same copy.
 */
export function withAgentWorkflows(applicationWorkflowsPath: string): string {
  if (path.resolve(applicationWorkflowsPath) === agentWorkflowsPath) return agentWorkflowsPath;
  const source =
    `export * from ${JSON.stringify(path.resolve(applicationWorkflowsPath))};\n` +
    `export { ${AGENT_WORKFLOW_NAMES.join(', ')} } from ${JSON.stringify(agentWorkflowsPath)};\n`;
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const directory = path.join(nodeModulesOf(applicationWorkflowsPath), '.cache', 'durable-agent');
  const file = path.join(directory, `workflows-${digest}.js`);
  if (existsSync(file)) return file;
  try {
    mkdirSync(directory, { recursive: true });
    // Written whole under another name first, so a worker bundling at the same moment never reads half a file.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, source);
    renameSync(partial, file);
  } catch (error) {
    throw new Error(
      `durableAgentPlugin: cannot write the joined workflows module in ${directory} ` +
        `(${(error as { code?: string }).code ?? String(error)}). Build the bundle where it can be written ` +
        '(bundleWorkflowCode({ workflowsPath, plugins: [plugin] })) and pass it as workflowBundle.',
      { cause: error },
    );
  }
  return file;
}

/** The nearest `node_modules` above the application's workflows that holds `@temporalio/workflow`. */
function nodeModulesOf(applicationWorkflowsPath: string): string {
  let directory = path.dirname(path.resolve(applicationWorkflowsPath));
  for (;;) {
    const candidate = path.join(directory, 'node_modules');
    if (existsSync(path.join(candidate, '@temporalio', 'workflow'))) return candidate;
    const parent = path.dirname(directory);
    if (parent === directory) {
      throw new Error(
        `durableAgentPlugin: no node_modules/@temporalio/workflow above ${applicationWorkflowsPath}; the workflow ` +
          'bundle needs it. Install @temporalio/workflow in the application that holds its workflows.',
      );
    }
    directory = parent;
  }
}
