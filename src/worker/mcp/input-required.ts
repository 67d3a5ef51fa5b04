import type { ElicitRequest, InputRequiredResult } from '@modelcontextprotocol/client';
import type { ToolQuestion } from '../../shared/types.js';
import { toRequest } from './elicitation.js';

/**
 * A 2026-07-28 server's `input_required` answer to a tool call (multi round-trip requests), read for the workflow: the
 * questions go to the person, and the call is sent again with their answers and the server's `requestState`. Only
 * elicitation is asked of a person; sampling and roots (both deprecated by the revision, and never declared by this
 * client) are refused. See docs/mcp.md, "Questions from servers".
 */

/** What the workflow gets: the questions, or why the call cannot go on. */
export type InputRequiredReading =
  { kind: 'questions'; questions: ToolQuestion[] } | { kind: 'refused'; reason: string };

/** Methods a server may embed that this client answers only with a refusal. */
const REFUSED_METHODS: Record<string, string> = {
  'sampling/createMessage': 'sampling (a model call made for the server)',
  'roots/list': "roots (the client's file-system roots)",
};

export function readInputRequired(result: InputRequiredResult): InputRequiredReading {
  const questions: ToolQuestion[] = [];
  for (const [key, entry] of Object.entries(result.inputRequests ?? {})) {
    const method = (entry as { method?: unknown }).method;
    if (method === 'elicitation/create') {
      questions.push({ key, ...toRequest((entry as ElicitRequest).params) });
      continue;
    }
    const refused = typeof method === 'string' ? REFUSED_METHODS[method] : undefined;
    return {
      kind: 'refused',
      reason:
        refused === undefined
          ? `the server asked for ${JSON.stringify(method)} (input request "${key}"), which MCP does not define`
          : `the server asked for ${refused} (input request "${key}"), which durable-agent does not offer: the ` +
            '2026-07-28 revision deprecates it, so the call was not sent again',
    };
  }
  return { kind: 'questions', questions };
}
