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
