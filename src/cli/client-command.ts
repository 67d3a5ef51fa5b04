import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, Option } from '@commander-js/extra-typings';
import type { DurableAgentClient } from '../client/index.js';
import type { ConversationSettings } from '../workflows/definitions.js';
import { ExitCode } from '../shared/exit-codes.js';
import { causeChain, errorMessage } from '../shared/errors.js';

/**
 * What the conversation commands (start, send, ask, chat, history, list, interrupt, end) share: options, the
 * connection, and the mapping from client errors to exit codes. The client is imported inside actions so that
 * `durable-agent --help` loads neither the Temporal client nor the worker.
 */

/** An error the CLI reports as one line and the exit code it carries (src/cli/output.ts reads `exitCode`). */
export class CliError extends Error {
  override name = 'CliError';

  constructor(
    message: string,
    readonly exitCode: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export const jsonOption = () => new Option('--json', 'print machine-readable JSON on stdout');

export const conversationOption = () =>
  new Option('-c, --conversation <id>', 'conversation id (default: a new random one, printed)');

export const requiredConversationOption = () =>
  new Option('-c, --conversation <id>', 'conversation id').makeOptionMandatory();

/* Options that set a new conversation's settings (ignored by a conversation that is already running). */
export const modelOption = () =>
  new Option('--model <name>', "model of a new conversation (default: the worker's DURABLE_AGENT_MODEL)");
export const systemPromptOption = () => new Option('--system-prompt <text>', 'system prompt of a new conversation');
export const idleTimeoutOption = () =>
  new Option('--idle-timeout <seconds>', 'close the run after this long without a message (it reopens)').argParser(
    parsePositiveNumber,
  );
export const settingsOption = () =>
  new Option('--settings <json>', 'more ConversationSettings of a new conversation, as JSON').argParser(parseSettings);

export interface SettingsFlags {
  model?: string;
  systemPrompt?: string;
  idleTimeout?: number;
  settings?: ConversationSettings;
}

export function settingsFrom(flags: SettingsFlags): ConversationSettings | undefined {
  const settings: ConversationSettings = { ...flags.settings };
  if (flags.model !== undefined) settings.model = flags.model;
  if (flags.systemPrompt !== undefined) settings.systemPrompt = flags.systemPrompt;
  if (flags.idleTimeout !== undefined) settings.idleTimeoutMs = Math.round(flags.idleTimeout * 1000);
  return Object.keys(settings).length > 0 ? settings : undefined;
}

export function parsePositiveNumber(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a positive number.');
  return parsed;
}

export function parseWholeNumber(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('expected a whole number (0 or more).');
  return parsed;
}

function parseSettings(value: string): ConversationSettings {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected a JSON object such as \'{"maxTurnsPerRun": 50}\'.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidArgumentError('expected a JSON object such as \'{"maxTurnsPerRun": 50}\'.');
  }
  return parsed;
}

/** A conversation id for commands that may create one: the given id, or a new short random one. */
export function conversationIdOrNew(id: string | undefined): { id: string; generated: boolean } {
  return id === undefined ? { id: randomUUID().slice(0, 8), generated: true } : { id, generated: false };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Connect with the environment's configuration (TEMPORAL_ADDRESS, default localhost:7233, the address
 * `durable-agent dev` serves), run `action`, close. Client errors become exit codes.
 */
export async function withClient<T>(action: (client: DurableAgentClient) => Promise<T>): Promise<T> {
  const [{ loadConfig }, api] = await Promise.all([import('../config.js'), import('../client/index.js')]);
  const config = loadConfig();
  const address = config.temporal.address ?? api.DEFAULT_TEMPORAL_ADDRESS;
  let client: DurableAgentClient;
  try {
    client = await api.DurableAgentClient.connect({ temporal: config.temporal, taskQueue: config.taskQueue });
  } catch (error) {
    throw unreachable(address, error);
  }
  try {
    return await action(client);
  } catch (error) {
    throw await toCliError(error, address);
  } finally {
    await client.close();
  }
}

function unreachable(address: string, error: unknown): CliError {
  const reason = errorMessage(error);
  return new CliError(
    `Cannot reach Temporal at ${address} (${reason}). Start it with \`durable-agent dev\` (it serves ` +
      'localhost:7233), or set TEMPORAL_ADDRESS to a running cluster.',
    ExitCode.Unavailable,
    { cause: error },
  );
}

/** The exit code of each client error (documented in docs/cli.md). */
export async function toCliError(error: unknown, address: string): Promise<unknown> {
  if (error instanceof CliError) return error;
  const api = await import('../client/index.js');
  const message = errorMessage(error);
  if (error instanceof api.ConversationNotFoundError) return new CliError(message, ExitCode.NotFound, { cause: error });
  if (error instanceof api.ConversationEndedError) return new CliError(message, ExitCode.Ended, { cause: error });
  if (error instanceof api.MessageRejectedError) return new CliError(message, ExitCode.Usage, { cause: error });
  if (error instanceof api.AskTimeoutError) return new CliError(message, ExitCode.Unavailable, { cause: error });
  if (isUnavailable(error)) return unreachable(address, error);
  return error;
}

/** gRPC UNAVAILABLE (14) anywhere in the cause chain: the cluster went away. */
function isUnavailable(error: unknown): boolean {
  return [...causeChain(error)].some((cause) => (cause as { code?: unknown }).code === 14);
}
