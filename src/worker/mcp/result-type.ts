import { isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/client';

/**
 * A result without `resultType` is read as `complete`, whatever revision the server speaks.
 *
 * The 2026-07-28 schema says servers of that revision MUST send the field, and that a client MUST treat an absent one
 * as `complete` for servers of earlier revisions. The SDK reads the first sentence as a rule for the client and fails
 * the call, although the server did the work: servers that speak 2026-07-28 and still leave the field out exist (SDKs
 * that set it only on `input_required` answers), and the conformance suite requires the `complete` reading. Nothing is
 * lost by it: a result without the field cannot be an `input_required` answer, which is only recognised by the field.
 *
 * Called by the transport's first handler (./server-connection.ts): the SDK's `Client.connect` keeps a handler already
 * set on the transport and calls it first with the same message, so the field is set before the SDK decodes the result.
 */
export function readMissingResultTypeAsComplete(message: JSONRPCMessage): void {
  if (!isJSONRPCResultResponse(message)) return;
  const result = message.result as Record<string, unknown>;
  if (result.resultType === undefined) result.resultType = 'complete';
}
