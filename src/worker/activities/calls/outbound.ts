import type OpenAI from 'openai';
import { looksSecret, Redactor } from '../../../shared/redaction.js';
import type { AssistantMessage } from '../../../shared/types.js';

/**
 * Where the worker's secrets are kept out of what its activities send (docs/security.md, "What leaves the worker").
 * Every activity runs through {@link redactOutcome}, inside the part that keeps finished results through a Temporal
 * outage, so a result or failure is redacted before it is kept, reported or delivered later. Streamed text, heartbeat
 * details and the transcript the worker caches are redacted where they are made (../model/call.ts, ../tools/call.ts), with the
 * same {@link Redactor}.
 */

/** What the worker's secrets are gathered from. */
export interface SecretSources {
  /** The worker's registry; default: the secret-looking variables of `process.env`. */
  secrets?: Redactor;
  /** The model clients: their API keys are secrets. */
  openai: unknown;
  anthropic?: unknown;
  /** The MCP pool: its `secrets` (the servers' credentials, and tokens registered while it runs) are included. */
  mcp: unknown;
}

/**
 * The worker's secrets: the given registry (or one with the secret-looking variables of `process.env`), the model
 * client's API key and the MCP pool's secrets. A registry passed in is extended, not copied, so what is added to it
 * later is redacted too.
 */
export function workerSecrets(sources: SecretSources): Redactor {
  const secrets = sources.secrets ?? new Redactor().addEnvironment(process.env);
  const apiKey = (sources.openai as Partial<Pick<OpenAI, 'apiKey'>>).apiKey;
  if (typeof apiKey === 'string' && looksSecret(apiKey)) secrets.add(apiKey, '${OPENAI_API_KEY}');
  const anthropicKey = (sources.anthropic as { apiKey?: unknown } | undefined)?.apiKey;
  if (typeof anthropicKey === 'string' && looksSecret(anthropicKey)) secrets.add(anthropicKey, '${ANTHROPIC_API_KEY}');
  const pool = (sources.mcp as { secrets?: unknown }).secrets;
  if (pool instanceof Redactor) secrets.include(pool);
  return secrets;
}

/**
 * Run one activity attempt and redact what it returns or throws (message, stack, details and causes, in place); a
 * result is redacted with `redact`, by default as a whole.
 */
export async function redactOutcome<T>(
  secrets: Redactor,
  run: () => Promise<T>,
  redact: (result: T) => T = (result) => secrets.value(result),
): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (error) {
    throw secrets.error(error);
  }
  return redact(result);
}

/**
 * A model answer redacted as a whole except the arguments of its tool calls, kept as the model wrote them: they are
 * what the tool receives, and a path, a host or an id that happens to match a secret's value must reach the server
 * as written. They add no secret to history: everything the model is sent has been redacted, so it can only write a
 * secret it was given by a client, in a message that history records anyway.
 */
export function redactModelAnswer<T extends { message: AssistantMessage }>(secrets: Redactor, answer: T): T {
  const written = answer.message.toolCalls;
  const redacted = secrets.value(answer);
  if (written === undefined || redacted === answer) return redacted;
  const toolCalls = redacted.message.toolCalls?.map((call, index) => ({
    ...call,
    arguments: written[index]!.arguments,
  }));
  return { ...redacted, message: { ...redacted.message, toolCalls } };
}
