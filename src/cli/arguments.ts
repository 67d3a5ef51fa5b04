import { InvalidArgumentError } from '@commander-js/extra-typings';
import { errorMessage } from '../shared/errors.js';
import type { JsonObject } from '../shared/types.js';

/* Argument parsers for commander options: each turns bad input into a usage error that says what was expected. */

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

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('expected a TCP port from 0 to 65535 (0 picks a free one).');
  }
  return port;
}

/** A JSON object (`--arguments '{"path": "notes/a.md"}'`): anything else is a usage error that shows the expected shape. */
export function parseJsonObject(value: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(
      `expected a JSON object such as '{"path": "notes/report.md"}' (${errorMessage(error)}).`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidArgumentError(`expected a JSON object such as '{"path": "notes/report.md"}', not ${value}.`);
  }
  return parsed as JsonObject;
}
