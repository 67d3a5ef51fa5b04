import { ConfigError } from '../config.js';
import { describeValue } from '../shared/errors.js';

/** Reading the values of the `mcpServers` file (./config.ts), each error naming the file, the server and the key. */

/** A ConfigError, so the CLI reports it as one (exit code 2) like a bad environment variable. */
export class McpConfigError extends ConfigError {
  override name = 'McpConfigError';
}

/** Where a value sits in the file, so every error says file, server and key. */
export class Where {
  constructor(
    readonly file: string,
    readonly server: string,
  ) {}

  error(key: string | undefined, problem: string): McpConfigError {
    const at = key === undefined ? '' : ` key "${key}"`;
    return new McpConfigError(`${this.file}: server "${this.server}"${at}: ${problem}`);
  }
}

export function requiredString(where: Where, object: Record<string, unknown>, key: string): string {
  const value = object[key];
  if (typeof value !== 'string' || value.trim() === '') {
    throw where.error(key, `expected a non-empty string, got ${describeValue(value)}.`);
  }
  return value;
}

export function optionalString(where: Where, object: Record<string, unknown>, key: string): string | undefined {
  return object[key] === undefined ? undefined : requiredString(where, object, key);
}

export function optionalBoolean(where: Where, object: Record<string, unknown>, key: string): boolean | undefined {
  const value = object[key];
  if (value === undefined || typeof value === 'boolean') return value;
  throw where.error(key, `expected true or false, got ${describeValue(value)}.`);
}

export function optionalStringList(where: Where, object: Record<string, unknown>, key: string): string[] | undefined {
  const value = object[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw where.error(key, `expected an array of strings, got ${describeValue(value)}.`);
  }
  return value;
}

export function optionalStringRecord(
  where: Where,
  object: Record<string, unknown>,
  key: string,
): Record<string, string> | undefined {
  const value = object[key];
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw where.error(key, `expected an object of strings, got ${describeValue(value)}.`);
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') {
      throw where.error(`${key}.${name}`, `expected a string, got ${describeValue(item)}.`);
    }
  }
  return value as Record<string, string>;
}

export function mapValues(
  record: Record<string, string>,
  transform: (value: string, key: string) => string,
): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, transform(value, key)]));
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
