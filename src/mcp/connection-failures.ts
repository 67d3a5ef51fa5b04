import { errorMessage } from '../shared/errors.js';
import type { McpServerConfig } from './config.js';
import { describeConnectFailure, McpTransportError, rejectionText, type RequestFailure } from './errors.js';
import { endpointAsWritten } from './redaction.js';

/**
 * What a failure to start a server, open a session or list its tools becomes: the pool's errors for "nothing was
 * sent", worded for the person who has to fix the configuration.
 */

/**
 * The error for a server that could not be started or reached (or not any more, the pool being closed). Nothing was
 * sent, so it is retryable: the next attempt reconnects, on this worker or another. The endpoint is quoted as written
 * in the configuration, never with its `${VAR}`s expanded.
 */
export function couldNotReach(config: McpServerConfig, problem: string, cause?: unknown): McpTransportError {
  const target = `${config.transport === 'stdio' ? 'start' : 'reach'} ${endpointAsWritten(config)}`;
  return new McpTransportError(`MCP server "${config.name}": could not ${target}: ${problem}`, {
    server: config.name,
    requestSent: false,
    cause,
  });
}

/**
 * What a failed start or `initialize` becomes. A missing or non-executable command and an HTTP 4xx answer (bad
 * credentials, wrong URL) are not retryable: they need a person, and the same attempt would fail the same way.
 */
export function connectFailure(config: McpServerConfig, error: unknown, stderr: string): McpTransportError {
  const failure = describeConnectFailure(error);
  const options = { server: config.name, requestSent: false, retryable: false, cause: error };
  switch (failure.kind) {
    case 'rejected':
      return new McpTransportError(
        `MCP server "${config.name}" ${rejectionText(failure.status)} (${endpointAsWritten(config)}: ` +
          `${errorMessage(error)})`,
        options,
      );
    case 'cannot_start': {
      const problem = failure.code === 'ENOENT' ? 'no such command or directory' : 'cannot be run';
      return new McpTransportError(
        `MCP server "${config.name}": could not start ${endpointAsWritten(config)}: ${errorMessage(error)} ` +
          `(${problem}: check "command" and "cwd" in the MCP config)${stderr}`,
        options,
      );
    }
    case 'unreachable':
      return couldNotReach(config, `${errorMessage(error)}${stderr}`, error);
  }
}

/** What a failed `tools/list` becomes: "not sent" (listing runs no tool); retryable unless the server refused it. */
export function listingFailure(
  config: McpServerConfig,
  failure: RequestFailure,
  error: unknown,
  stderr: string,
): McpTransportError {
  const rejected = failure.kind === 'rejected';
  const problem = rejected
    ? `${rejectionText(failure.status)} (${errorMessage(error)})`
    : `could not list its tools: ${errorMessage(error)}`;
  return new McpTransportError(`MCP server "${config.name}" ${problem}${stderr}`, {
    server: config.name,
    requestSent: false,
    retryable: !rejected,
    cause: error,
  });
}
