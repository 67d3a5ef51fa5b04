import { randomUUID } from 'node:crypto';
import { Option } from '@commander-js/extra-typings';
import type { DurableAgentClient } from '../client/index.js';
import { isEncryptionKeyError } from '../shared/encryption-errors.js';
import { ExitCode } from '../shared/exit-codes.js';
import { causeChain, DurableAgentError, errorMessage } from '../shared/errors.js';

/**
 * What the conversation commands (start, send, ask, chat, history, list, interrupt, end, approvals, approve, deny) share: options, the
 * connection, and the mapping from client errors to exit codes. The client is imported inside actions so that
 * `durable-agent --help` loads neither the Temporal client nor the worker.
 */

/** An error the CLI reports as one line and the exit code it carries (src/cli/output.ts reads `exitCode`). */
export class CliError extends DurableAgentError {
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
  const [{ checkConfigFiles, loadConfig }, { readTenants }, api] = await Promise.all([
    import('../config/index.js'),
    import('../config/tenants.js'),
    import('../client/index.js'),
  ]);
  const config = loadConfig();
  checkConfigFiles(config);
  const tenants = readTenants();
  const address = config.temporal.address ?? api.DEFAULT_TEMPORAL_ADDRESS;
  let client: DurableAgentClient;
  try {
    client = await api.DurableAgentClient.connect({
      temporal: config.temporal,
      taskQueue: config.taskQueue,
      encryptionKeys: config.encryptionKeys,
      tenants,
    });
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
  if (error instanceof api.UnknownApprovalError) return new CliError(message, ExitCode.NotFound, { cause: error });
  if (error instanceof api.ApprovalAlreadyDecidedError) {
    return new CliError(message, ExitCode.AlreadyDecided, { cause: error });
  }
  if (error instanceof api.InvalidApprovalArgumentsError)
    return new CliError(message, ExitCode.Usage, { cause: error });
  if (error instanceof api.AskTimeoutError) return new CliError(message, ExitCode.Unavailable, { cause: error });
  if (error instanceof api.ScheduleNotFoundError) return new CliError(message, ExitCode.NotFound, { cause: error });
  if (error instanceof api.ScheduleError) return new CliError(message, ExitCode.Usage, { cause: error });
  // Keys that do not match the worker's (this side's or the worker's refusal): the configuration is wrong.
  const keyError = [...causeChain(error)].find(isEncryptionKeyError);
  if (keyError !== undefined) return new CliError(errorMessage(keyError), ExitCode.Usage, { cause: error });
  if (isUnavailable(error)) return unreachable(address, error);
  return error;
}

/** gRPC UNAVAILABLE (14) anywhere in the cause chain: the cluster went away. */
function isUnavailable(error: unknown): boolean {
  return [...causeChain(error)].some((cause) => (cause as { code?: unknown }).code === 14);
}
