import { ConfigError } from '../config/index.js';
import { errorMessage } from '../shared/errors.js';
import { ExitCode } from '../shared/exit-codes.js';
import { environmentSecrets } from '../shared/redaction.js';

/** Print an error the way a person wants to read it and return the exit code it maps to. */
export function reportError(error: unknown): number {
  // A message can quote a value it found wrong (a URL with its password) or an error a server sent back.
  const secrets = environmentSecrets();
  if (error instanceof ConfigError) {
    process.stderr.write(`durable-agent: ${secrets.text(error.message)}\n`);
    return ExitCode.Usage;
  }
  const exitCode = (error as { exitCode?: unknown }).exitCode;
  const message = errorMessage(error);
  process.stderr.write(`durable-agent: ${secrets.text(message)}\n`);
  if (process.env.DEBUG && error instanceof Error && error.stack)
    process.stderr.write(`${secrets.text(error.stack)}\n`);
  return typeof exitCode === 'number' ? exitCode : ExitCode.Failure;
}
