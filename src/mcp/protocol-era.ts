import { type Client, type PriorDiscovery, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * Which MCP revision a server is spoken to in, decided per server without configuration: the client probes with
 * `server/discover`; a server that speaks 2026-07-28 is then spoken to statelessly, any other through the 2025-11-25
 * `initialize` session. See docs/mcp.md, "Protocol versions".
 */

/** Probe each server with `server/discover` and fall back to `initialize` when it does not know it. */
export const VERSION_NEGOTIATION = { mode: 'auto' } as const;

/**
 * The SDK's stdio transport, probed in place. The SDK probes its own stdio transport on a second, short-lived copy of
 * the server process; a server with side effects at start would see two starts per connection, and the pool promises
 * one process per server. A subclass is probed on its own pipe (the SDK's rule), so this class only has to exist.
 */
export class InPlaceStdioClientTransport extends StdioClientTransport {}

/**
 * True when the probe ended because the server closed the connection: servers built on SDKs that exit on any request
 * before `initialize` do that, and are legacy servers to be started again and spoken to through `initialize`.
 */
export function closedDuringProbe(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    /connection closed during the server\/discover probe/.test(error.message)
  );
}

/**
 * The era a stdio server answered with, kept so that its later connections skip the probe: the same command starts
 * the same program. An HTTP server is probed on every connection, since a redeployment may change what it speaks.
 */
export class EraMemory {
  private verdict: PriorDiscovery | undefined;

  get prior(): PriorDiscovery | undefined {
    return this.verdict;
  }

  assumeLegacy(): void {
    this.verdict = { kind: 'legacy' };
  }

  remember(client: Client): void {
    const discover = client.getDiscoverResult();
    this.verdict =
      client.getProtocolEra() === 'modern' && discover !== undefined
        ? { kind: 'modern', discover }
        : { kind: 'legacy' };
  }
}
