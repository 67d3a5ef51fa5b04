import { errorMessage } from '../../shared/errors.js';
import type { McpServerConfig } from './config.js';
import { OAuthError, UnauthorizedError } from '@modelcontextprotocol/client';
import { causeChain } from '../../shared/errors.js';
import {
  describeConnectFailure,
  httpAnswerText,
  McpTransportError,
  networkErrorCode,
  rejectionText,
  type RequestFailure,
} from './errors.js';
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
  const refused = authorizationFailure(config, error);
  if (refused !== undefined) return refused;
  const failure = describeConnectFailure(error);
  const options = { server: config.name, requestSent: false, retryable: false, cause: error };
  switch (failure.kind) {
    case 'rejected':
      return new McpTransportError(
        `MCP server "${config.name}" ${rejectionText(failure.status, usesOAuth(config))} (${endpointAsWritten(config)}: ` +
          `${errorMessage(error)}${httpAnswerText(error)})`,
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
    case 'unreachable': {
      // The SDK's version probe words a refused connection "fetch failed": the socket's code says which failure it was.
      const text = errorMessage(error);
      const code = error instanceof Error ? networkErrorCode(error) : undefined;
      return couldNotReach(
        config,
        `${text}${code !== undefined && !text.includes(code) ? ` (${code})` : ''}${stderr}`,
        error,
      );
    }
  }
}

/** What a failed `tools/list` becomes: "not sent" (listing runs no tool); retryable unless the server refused it. */
export function listingFailure(
  config: McpServerConfig,
  failure: RequestFailure,
  error: unknown,
  stderr: string,
): McpTransportError {
  const refused = authorizationFailure(config, error);
  if (refused !== undefined) return refused;
  const rejected = failure.kind === 'rejected';
  const problem = rejected
    ? `${rejectionText(failure.status, usesOAuth(config))} (${errorMessage(error)})`
    : `could not list its tools: ${errorMessage(error)}`;
  return new McpTransportError(`MCP server "${config.name}" ${problem}${stderr}`, {
    server: config.name,
    requestSent: false,
    retryable: !rejected,
    cause: error,
  });
}

/**
 * An OAuth failure on the way to the server (src/worker/mcp/oauth/): the provider's own errors as they are (no login on this
 * worker, `McpAuthorizationRequiredError`; a refresh that failed for now), or the authorization server refusing to
 * issue a token, which only a person can fix. Nothing reached the server's tools. Undefined for any other error.
 */
export function authorizationFailure(config: McpServerConfig, error: unknown): McpTransportError | undefined {
  for (const cause of causeChain(error)) {
    // Ours, from the OAuth provider (src/worker/mcp/oauth/provider.ts): already worded for the operator.
    if (cause instanceof McpTransportError) return cause;
    if (cause instanceof OAuthError || cause instanceof UnauthorizedError) {
      const what = cause instanceof OAuthError ? `${cause.code}: ${cause.message}` : cause.message;
      return new McpTransportError(
        `MCP server "${config.name}": its authorization server refused to issue a token (${what}): check "oauth" ` +
          `in the MCP config${config.transport === 'http' && config.oauth?.grant === 'authorization_code' ? ', or log in again' : ''}`,
        { server: config.name, requestSent: false, retryable: false, cause: error },
      );
    }
  }
  return undefined;
}

/** True for an HTTP server authorized with OAuth. */
export function usesOAuth(config: McpServerConfig): boolean {
  return config.transport === 'http' && config.oauth !== undefined;
}
