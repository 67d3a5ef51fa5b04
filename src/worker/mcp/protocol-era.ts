import {
  type Client,
  type PriorDiscovery,
  SdkError,
  SdkErrorCode,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { McpServerConfig } from './config.js';

/**
 * Which MCP revision a server is spoken to in, per server: the one its `protocolVersion` pins; else, over stdio, the
 * 2025-11-25 `initialize` session; else (HTTP) the client probes with `server/discover`, and a server that speaks
 * 2026-07-28 is spoken to statelessly, any other through the session. See docs/mcp.md, "Protocol versions".
 *
 * Why stdio servers default to the session: the worker declares the elicitation capability, and in 2026-07-28 a server
 * can ask only by answering `input_required`. Servers that ask by request while the call runs, as the official SDKs
 * document it (Python's `ctx.elicit`), offer 2026-07-28 all the same and then fail their own question
 * (`NoBackChannelError`); in a session over a pipe, every way of asking works.
 */

/** Probe each server with `server/discover` and fall back to `initialize` when it does not know it. */
export const VERSION_NEGOTIATION = { mode: 'auto' } as const;

/** The revision spoken to a server without `protocolVersion`, by transport (`negotiated`: probed, as above). */
export const DEFAULT_ERA = { stdio: '2025-11-25', http: 'negotiated' } as const;

/** The SDK's negotiation for a server: a pin, the session alone (no probe), or the probe. */
export function versionNegotiationFor(
  config: Pick<McpServerConfig, 'transport' | 'protocolVersion'>,
): VersionNegotiationOptions {
  const era = config.protocolVersion ?? DEFAULT_ERA[config.transport];
  if (era === 'negotiated') return VERSION_NEGOTIATION;
  // The only 2025-era handshake is `initialize`: the SDK's legacy mode sends it without a probe.
  return era === '2025-11-25' ? { mode: 'legacy' } : { mode: { pin: era } };
}

/** True when connections to the server start with a `server/discover` probe (a pin to 2026-07-28, or negotiation). */
export function probes(config: Pick<McpServerConfig, 'transport' | 'protocolVersion'>): boolean {
  return versionNegotiationFor(config).mode !== 'legacy';
}

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
