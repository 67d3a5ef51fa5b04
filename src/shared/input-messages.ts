import type { JsonObject } from './types.js';

/**
 * An MCP server's questions to a person during a tool call (elicitation) and their answers, shared by the workflow,
 * the client, the stream and the tests. See docs/mcp.md.
 */

/** A question an MCP server asked the person during a tool call (MCP elicitation). */
export interface InputRequest {
  /** What `answerInput` names. */
  requestId: string;
  /** The tool call during which the server asked. */
  callId: string;
  /**
   * @asType integer
   * @minimum 1
   */
  turn: number;
  tool: string;
  server: string;
  /** The server's message to the person. */
  message: string;
  /** `form`: answer with content matching `requestedSchema`; `url`: the person opens `url` and then accepts. */
  mode: 'form' | 'url';
  /** The JSON Schema of the requested fields (form mode). */
  requestedSchema?: JsonObject;
  /** The page to open (url mode). */
  url?: string;
  /** @format date-time */
  requestedAt: string;
  /**
   * When the request is answered with `cancel` if nobody has answered. Absent for a 2026-07-28 server's question
   * (`input_required`): it waits until answered, or until its turn is interrupted.
   * @format date-time
   */
  expiresAt?: string;
}

/** The argument of the `answerInput` update, and (with `answeredAt`) what the stream reports. */
export interface InputAnswer {
  requestId: string;
  action: 'accept' | 'decline' | 'cancel';
  /** The answer's fields (with `accept`, form mode), validated against the requested schema. */
  content?: JsonObject;
  by?: string;
}
