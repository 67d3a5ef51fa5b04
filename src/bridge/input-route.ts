import type { Hono } from 'hono';
import type { InputAnswer } from '../workflows/definitions.js';
import type { JsonObject } from '../shared/types.js';
import { clientRefusal, problem } from './http-errors.js';

/** What the route needs of `DurableAgentClient`. */
export interface InputAnsweringClient {
  answerInput(
    conversationId: string,
    requestId: string,
    options: { action: InputAnswer['action']; content?: JsonObject; by?: string },
  ): Promise<InputAnswer>;
}

/** The client's named errors as HTTP statuses; nothing changed when one comes back. */
const STATUS: Record<string, 400 | 404 | 409> = {
  InvalidInputError: 400,
  InputRequestNotFoundError: 404,
  ConversationNotFoundError: 404,
  InputAlreadyAnsweredError: 409,
};

const USAGE = 'Expected {"action": "accept"|"decline"|"cancel", "content"?: object, "by"?: string}.';

/**
 * `POST /conversations/:id/inputs/:requestId` with `{ "action": "accept"|"decline"|"cancel", "content"?, "by"? }`:
 * answer an MCP server's question (docs/mcp.md). 200 with the answer; 400 for a body or content that does not fit,
 * 404 for a question that is not pending, 409 for one answered already; errors as `{ error: { type, message } }`.
 */
export function addInputRoute(app: Hono, agent: InputAnsweringClient): void {
  app.post('/conversations/:id/inputs/:requestId', async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json(problem('InvalidBody', `The body must be JSON. ${USAGE}`), 400);
    }
    const { action, content, by } = (body ?? {}) as { action?: unknown; content?: unknown; by?: unknown };
    const validContent =
      content === undefined || (typeof content === 'object' && content !== null && !Array.isArray(content));
    if (
      !['accept', 'decline', 'cancel'].includes(action as string) ||
      !validContent ||
      !(by === undefined || typeof by === 'string')
    ) {
      return c.json(problem('InvalidBody', USAGE), 400);
    }
    try {
      const answer = await agent.answerInput(c.req.param('id'), c.req.param('requestId'), {
        action: action as InputAnswer['action'],
        ...(content !== undefined ? { content: content as JsonObject } : {}),
        ...(by !== undefined ? { by } : {}),
      });
      return c.json(answer, 200);
    } catch (error) {
      return clientRefusal(c, error, STATUS);
    }
  });
}
