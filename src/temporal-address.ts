import net from 'node:net';

/** What a Temporal frontend address looks like, for errors that refuse one. */
export const ADDRESS_SHAPE =
  'host:port (a port from 1 to 65535; an IPv6 host in brackets), such as localhost:7233, [::1]:7233 or ' +
  'my-ns.a1b2c.tmprl.cloud:7233';

/**
 * What is wrong with a `host:port` address, or undefined when nothing is. Checked when the configuration is read
 * (src/config.ts), because the Temporal core bridge reports a bad address only when it connects, as
 * "client_new.args[1].targetUrl: invalid port number".
 */
export function addressProblem(address: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) return 'a URL, not host:port: leave out the scheme';
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(address);
  if (address.startsWith('[') && bracketed === null) return 'an IPv6 host needs its closing bracket';
  let host: string;
  let port: string | undefined;
  if (bracketed !== null) {
    host = bracketed[1]!;
    port = bracketed[2];
    if (!net.isIPv6(host) || host.includes('%')) return `${JSON.stringify(host)} is not an IPv6 address`;
  } else {
    const colon = address.lastIndexOf(':');
    if (colon === -1) return 'no port';
    host = address.slice(0, colon);
    port = address.slice(colon + 1);
    if (host === '') return 'no host';
    if (host.includes(':')) return net.isIPv6(host) ? 'an IPv6 host goes in brackets' : 'more than one colon';
    // The URL parser is the core bridge's judge too: it refuses e.g. 999.1.1.1 as an IPv4 address.
    const hostName = /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?$/.test(host) && !host.includes('..');
    if (!hostName || !URL.canParse(`http://${host}`)) return `${JSON.stringify(host)} is not a host name or IP address`;
  }
  if (port === undefined || port === '') return 'no port';
  if (!/^\d+$/.test(port)) return `the port ${JSON.stringify(port)} is not a number`;
  const number = Number(port);
  if (number < 1 || number > 65535) return `the port ${port} is not from 1 to 65535`;
  return undefined;
}
