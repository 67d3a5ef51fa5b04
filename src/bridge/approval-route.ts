import type { Context } from 'hono';
import type { ApprovalDecision } from '../shared/approval-messages.js';
import type { JsonObject } from '../shared/types.js';
import { clientRefusal, problem } from './http-errors.js';

/** What the approval route needs of `DurableAgentClient`. */
export interface ApprovalDeciding {
  approve(
    conversationId: string,
    callId: string,
    options?: { arguments?: JsonObject; always?: boolean; maxCostUsd?: number; by?: string },
  ): Promise<ApprovalDecision>;
  deny(conversationId: string, callId: string, options: { reason: string; by?: string }): Promise<ApprovalDecision>;
}

/** The body of `POST /conversations/:id/approvals/:callId`. */
interface DecisionBody {
  decision: 'approve' | 'deny';
  reason?: string;
  arguments?: JsonObject;
  always?: boolean;
  maxCostUsd?: number;
  by?: string;
}

/** The client's refusals of a decision, by error name, and the HTTP status each answers with. */
const refusalStatus: Record<string, 400 | 404 | 409> = {
  ConversationNotFoundError: 404,
  UnknownApprovalError: 404,
  ApprovalAlreadyDecidedError: 409,
  ConversationEndedError: 409,
  InvalidApprovalArgumentsError: 400,
};

const EXPECTED =
  'Expected {"decision": "approve" | "deny", "reason"?: string (required to deny), "arguments"?: object, ' +
  '"always"?: boolean, "maxCostUsd"?: number (a held model call only), "by"?: string}.';

/**
 * `POST /conversations/:id/approvals/:callId` (docs/streaming.md): decide a tool call that waits for a person. Answers
 * 200 with the `ApprovalDecision`; refusals as `{ error: { type, message } }`: 404 for an unknown conversation or call
 * id, 409 for a call decided already (or an ended conversation), 400 for a body that is not the expected JSON, a
 * denial without a reason, or edited arguments that do not match the tool's schema. A refusal changes nothing.
 */
export function decideApproval(agent: ApprovalDeciding) {
  return async (c: Context): Promise<Response> => {
    const conversationId = c.req.param('id')!;
    const callId = c.req.param('callId')!;
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json(problem('InvalidBody', `The body must be JSON. ${EXPECTED}`), 400);
    }
    const body = decisionBody(raw);
    if (typeof body === 'string') return c.json(problem('InvalidBody', `${body} ${EXPECTED}`), 400);
    try {
      const by = body.by !== undefined ? { by: body.by } : {};
      const decision =
        body.decision === 'approve'
          ? await agent.approve(conversationId, callId, {
              ...(body.arguments !== undefined ? { arguments: body.arguments } : {}),
              ...(body.always !== undefined ? { always: body.always } : {}),
              ...(body.maxCostUsd !== undefined ? { maxCostUsd: body.maxCostUsd } : {}),
              ...by,
            })
          : await agent.deny(conversationId, callId, { reason: body.reason ?? '', ...by });
      return c.json(decision, 200);
    } catch (error) {
      return clientRefusal(c, error, refusalStatus);
    }
  };
}

/** The body as a decision, or what is wrong with it. */
function decisionBody(raw: unknown): DecisionBody | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'The body must be a JSON object.';
  const body = raw as Record<string, unknown>;
  if (body.decision !== 'approve' && body.decision !== 'deny') {
    return `"decision" must be "approve" or "deny", got ${JSON.stringify(body.decision) ?? 'nothing'}.`;
  }
  const args = body.arguments;
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
    return '"arguments" must be a JSON object.';
  }
  for (const key of ['reason', 'by'] as const) {
    if (body[key] !== undefined && typeof body[key] !== 'string') return `"${key}" must be a string.`;
  }
  if (body.always !== undefined && typeof body.always !== 'boolean') return '"always" must be true or false.';
  if (body.maxCostUsd !== undefined && typeof body.maxCostUsd !== 'number') return '"maxCostUsd" must be a number.';
  return body as unknown as DecisionBody;
}
