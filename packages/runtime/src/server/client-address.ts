import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import { ConfigurationError } from '@switchboard/core';
import type { Context } from 'hono';

/** The address of a request whose peer is not known (served in-process, through `app.request()`). */
export const UNKNOWN_ADDRESS = 'unknown';

/** The most `X-Forwarded-For` entries read, from the right: a longer chain is a client's invention. */
const MAX_FORWARDED_HOPS = 16;

/** An IPv4 address as Node reports it on a dual-stack socket (`::ffff:127.0.0.1`) → its IPv4 form. */
function plain(address: string): string {
  const trimmed = address.trim();
  return trimmed.toLowerCase().startsWith('::ffff:') && isIP(trimmed.slice(7)) === 4
    ? trimmed.slice(7)
    : trimmed;
}

/** The peer's address as the Node server saw it, or undefined (no socket: an in-process request). */
function peerAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

/**
 * Finds a request's client address: the peer's, unless the peer is one of
 * `trustedProxies` (addresses such as `10.0.0.7`, or ranges such as
 * `10.0.0.0/8`, IPv4 or IPv6): then `X-Forwarded-For` is read from the
 * right, skipping trusted proxies, and the first other address is the
 * client's. Without trusted proxies `X-Forwarded-For` is never believed, as
 * anyone can send it. Throws a `ConfigurationError` for an entry that is
 * neither an address nor a range.
 */
export function clientAddressOf(trustedProxies: readonly string[] = []): (c: Context) => string {
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address = '', prefix, extra] = entry.trim().split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? undefined : Number(prefix);
    const maxBits = family === 6 ? 128 : 32;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= maxBits))
    ) {
      throw new ConfigurationError({
        message: `trustedProxies: '${entry}' is neither an IP address nor a range such as 10.0.0.0/8`,
      });
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) trusted.addAddress(address, type);
    else trusted.addSubnet(address, bits, type);
  }
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
  return (c) => {
    const peer = peerAddress(c);
    if (peer === undefined) return UNKNOWN_ADDRESS;
    let client = plain(peer);
    if (trustedProxies.length === 0 || !isTrusted(client)) return client;
    const forwarded = (c.req.header('x-forwarded-for') ?? '').split(',').map(plain).filter(Boolean);
    for (
      let index = forwarded.length - 1, hops = 0;
      index >= 0 && hops < MAX_FORWARDED_HOPS;
      index--, hops++
    ) {
      const hop = forwarded[index] as string;
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!isTrusted(hop)) return client;
    }
    return client;
  };
}
