/** Tool-name patterns of the `mcpServers` file (`allowTools`, `denyTools`, `requireApproval`, `approvalNotRequired`). */

/** True when `name` matches `pattern`, where `*` matches any run of characters and everything else is literal. */
export function matchesPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const expression = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${expression}$`).test(name);
}

/** The first part of a sub-agent's tool name (`agent__<name>`, src/worker/tools/define-sub-agent.ts). */
const SUB_AGENT_PREFIX = 'agent__';

/**
 * The tools a turn's `toolSelection` offers: those a pattern matches. A sub-agent only when a pattern names one
 * (`agent__…`), so `*` never lets an agent call agents by accident.
 */
export function selectTools<Tool extends { name: string; source?: string }>(
  tools: readonly Tool[],
  selection: readonly string[],
): Tool[] {
  return tools.filter((tool) =>
    selection.some(
      (pattern) =>
        matchesPattern(pattern, tool.name) && (tool.source !== 'agent' || pattern.startsWith(SUB_AGENT_PREFIX)),
    ),
  );
}
