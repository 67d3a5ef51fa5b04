import { matchesPattern } from './tool-patterns.js';
import type { ToolAnnotations, ToolApproval, ToolDefinition } from './types.js';
import type { ApprovalPolicy, ApprovalSettings } from './approval-messages.js';

/**
 * Which tool calls wait for a person's approval (docs/approvals.md). Pure functions: the worker applies a server's
 * policy when it lists the tools (`ToolDefinition.approval`), the turn applies the conversation's override and the
 * tools a person allowed for the rest of the conversation.
 */

/** What a policy looks at: the tool's names and its annotations (hints from the server). */
export type ApprovalSubject = Pick<ToolDefinition, 'name' | 'originalName'> & { annotations: ToolAnnotations };

/**
 * Why `policy` asks for approval of `tool`, naming `source` (who set the policy), or `undefined` when it does not.
 * A list names tools as the model sees them (`server__tool`) or as on their server; `*` matches any run of characters.
 */
export function policyReason(policy: ApprovalPolicy, tool: ApprovalSubject, source: string): string | undefined {
  if (policy === 'never') return undefined;
  if (policy === 'always') return `${source} requires approval of every tool`;
  if (policy === 'writes') {
    return tool.annotations.readOnlyHint === true
      ? undefined
      : `${source} requires approval of tools not annotated read-only`;
  }
  const pattern = policy.find((entry) => matchesPattern(entry, tool.name) || matchesPattern(entry, tool.originalName));
  return pattern === undefined ? undefined : `${source} lists ${JSON.stringify(pattern)} as needing approval`;
}

/**
 * A server's policy for one of its tools, as the worker records it on the tool's definition: `approvalNotRequired`
 * (names on the server, patterns as in `allowTools`) exempts a tool whatever `requireApproval` says.
 */
export function serverApproval(
  server: { name: string; requireApproval?: ApprovalPolicy; approvalNotRequired?: readonly string[] },
  tool: ApprovalSubject,
): ToolApproval | undefined {
  const exempt = (server.approvalNotRequired ?? []).some((pattern) => matchesPattern(pattern, tool.originalName));
  if (exempt || server.requireApproval === undefined) return undefined;
  const reason = policyReason(server.requireApproval, tool, `server "${server.name}"`);
  return reason === undefined ? undefined : { reason };
}

/**
 * Why a call of `tool` waits for approval in this conversation, or `undefined` when it runs at once: tools a person
 * allowed for the rest of the conversation never wait; the conversation's `approval.require` overrides every
 * server's policy (exemptions included); otherwise the server's policy recorded on the tool applies.
 */
export function approvalReason(
  tool: ToolDefinition,
  settings: ApprovalSettings | undefined,
  allowedTools: ReadonlySet<string>,
): string | undefined {
  if (allowedTools.has(tool.name)) return undefined;
  const require: unknown = settings?.require;
  if (require === undefined) return tool.approval?.reason;
  // Settings are not validated before the workflow starts: a wrong override errs on the side of asking.
  if (!isApprovalPolicy(require)) {
    return `the conversation's approval.require is not a policy (${JSON.stringify(require)}), so every call waits`;
  }
  return policyReason(require, tool, 'the conversation');
}

/** The conversation's approval timeout in milliseconds, or `undefined` (wait for as long as it takes) when not a positive number. */
export function approvalTimeout(settings: ApprovalSettings | undefined): number | undefined {
  const timeoutMs: unknown = settings?.timeoutMs;
  return typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs >= 1 ? timeoutMs : undefined;
}

/** Whether `value` is an approval policy; for the settings and the `mcpServers` file's `requireApproval`. */
export function isApprovalPolicy(value: unknown): value is ApprovalPolicy {
  if (value === 'never' || value === 'always' || value === 'writes') return true;
  return Array.isArray(value) && value.every((entry) => typeof entry === 'string' && entry.trim() !== '');
}
