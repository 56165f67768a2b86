import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ConfigurationError, ValidationError } from '@switchboard/core';

/** The longest callback URL accepted, in characters (browsers and proxies stay below 2,048 too). */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/** Which callback URLs an app accepts. Given once per app; see {@link validateCallbackUrl}. */
export interface CallbackUrlPolicy {
  /**
   * When given, only these hosts: exact names (`hooks.example.com`), IP
   * addresses (`127.0.0.1`, `::1`), or `*.example.com` for any subdomain of
   * `example.com` (not `example.com` itself). Matched without the port,
   * case-insensitively. A host listed here may be a loopback or private
   * address: listing it is the explicit permission.
   */
  allowedHosts?: readonly string[];
  /**
   * Accept loopback, private, link-local and other non-public IP addresses
   * (and `localhost`) without listing them (default false). Meant for
   * development; in production list the receivers in `allowedHosts`.
   */
  allowPrivateAddresses?: boolean;
}

// Addresses a callback must not reach unless allowed: they are this host, its network, or cloud metadata
// (169.254.169.254). A server that POSTs to any URL a client names is otherwise an SSRF relay.
// Two lists: a BlockList matches an IPv4 address against IPv4-mapped IPv6 rules too (::ffff:0:0/96 would take all).
const NON_PUBLIC_V4 = new BlockList();
const NON_PUBLIC_V6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  NON_PUBLIC_V4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC_V6.addSubnet(network, prefix, 'ipv6');

/** A URL's host without IPv6 brackets or a trailing dot, lower-cased (the WHATWG parser already lower-cases names). */
function bareHost(hostname: string): string {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** Whether `host` (bare, as {@link bareHost} gives it) is an IP address outside the public internet, or `localhost`. */
export function isNonPublicHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const version = isIP(host);
  if (version === 0) return false;
  return version === 4 ? NON_PUBLIC_V4.check(host, 'ipv4') : NON_PUBLIC_V6.check(host, 'ipv6');
}

/** Resolves a host name to its addresses, as `dns.promises.lookup(name, { all: true })` does. */
export type CallbackHostLookup = (hostname: string) => Promise<readonly { address: string }[]>;

const systemLookup: CallbackHostLookup = (hostname) => lookup(hostname, { all: true });

/**
 * Whether a URL that passed {@link validateCallbackUrl} without an
 * allow-list may be sent to now: its host name does not resolve to a
 * loopback, private or link-local address. Asked before each attempt, so a
 * name pointed at an internal address is refused; a name that changes
 * between this look-up and the connection (DNS rebinding) is not caught,
 * which is why `allowedHosts` is the control for production.
 * @throws what the look-up throws (an unknown name): a network error, tried again.
 */
export async function resolvesToPublicAddresses(
  url: URL,
  policy: CallbackUrlPolicy,
  resolve: CallbackHostLookup = systemLookup,
): Promise<boolean> {
  const host = bareHost(url.hostname);
  if (policy.allowedHosts || policy.allowPrivateAddresses || isIP(host) !== 0) return true;
  const addresses = await resolve(host);
  return addresses.every(({ address }) => !isNonPublicHost(address));
}

/** An allow-list entry in the form hosts are compared in, or undefined when it is not a host. */
function normalizeAllowedHost(entry: string): string | undefined {
  const trimmed = entry.trim().toLowerCase();
  const wildcard = trimmed.startsWith('*.');
  let name = wildcard ? trimmed.slice(2) : trimmed;
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  if (!name || /[\s/@?#*[\]]/.test(name)) return undefined;
  const version = isIP(name);
  // A colon outside an IPv6 address is a port, which the list does not take; nor is `*.10.0.0.1` a domain.
  if ((version === 0 && name.includes(':')) || (wildcard && version !== 0)) return undefined;
  try {
    const host = bareHost(new URL(`http://${version === 6 ? `[${name}]` : name}`).hostname);
    return wildcard ? `*.${host}` : host;
  } catch {
    return undefined;
  }
}

const normalizedLists = new WeakMap<readonly string[], readonly string[]>();

/**
 * The allow-list in the form {@link validateCallbackUrl} compares, checked
 * once (and kept per list, so a policy object reused for every request costs
 * nothing more).
 * @throws ConfigurationError naming an entry that is not a host name, `*.` and a domain, or an IP address.
 */
export function normalizeAllowedHosts(entries: readonly string[]): readonly string[] {
  const known = normalizedLists.get(entries);
  if (known) return known;
  const normalized = entries.map((entry) => {
    const host = typeof entry === 'string' ? normalizeAllowedHost(entry) : undefined;
    if (host) return host;
    throw new ConfigurationError({
      message: `callbacks allowedHosts has an invalid entry '${String(entry)}': use a host name, '*.' and a domain, or an IP address (no scheme, port or path)`,
    });
  });
  normalizedLists.set(entries, normalized);
  return normalized;
}

function allowedBy(host: string, allowedHosts: readonly string[]): boolean {
  return allowedHosts.some((entry) =>
    entry.startsWith('*.') ? host.endsWith(entry.slice(1)) && host.length > entry.length - 1 : host === entry,
  );
}

/**
 * Checks a callback URL a client sent, before anything is queued: an
 * absolute `http:` or `https:` URL of at most {@link MAX_CALLBACK_URL_LENGTH}
 * characters, without a user name or password, whose host is in
 * `allowedHosts` when that is given, and otherwise not a loopback, private or
 * link-local address unless `allowPrivateAddresses` says so.
 *
 * Host names are not resolved here (it runs on the request path); the
 * sender resolves them before each attempt ({@link resolvesToPublicAddresses}).
 * Where receivers are known, `allowedHosts` is the stronger control.
 *
 * @returns the parsed URL.
 * @throws ValidationError (a 400 on the HTTP surface) saying what is wrong with `callbackUrl`.
 * @example
 * ```ts
 * const url = validateCallbackUrl(body.callbackUrl, { allowedHosts: ['*.example.com'] });
 * ```
 */
export function validateCallbackUrl(url: string, policy: CallbackUrlPolicy = {}): URL {
  const refuse = (reason: string): never => {
    throw new ValidationError({ message: 'Invalid callbackUrl', issues: [`callbackUrl: ${reason}`] });
  };
  if (typeof url !== 'string' || url.length === 0) return refuse('expected a URL');
  if (url.length > MAX_CALLBACK_URL_LENGTH)
    return refuse(`longer than ${MAX_CALLBACK_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('not an absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return refuse('only http and https URLs are accepted');
  if (parsed.username || parsed.password) return refuse('must not contain a user name or password');
  const host = bareHost(parsed.hostname);
  if (!host) return refuse('has no host');
  const { allowedHosts, allowPrivateAddresses = false } = policy;
  if (allowedHosts) {
    if (!allowedBy(host, normalizeAllowedHosts(allowedHosts)))
      return refuse('this host is not among the allowed callback hosts');
    return parsed;
  }
  if (!allowPrivateAddresses && isNonPublicHost(host))
    return refuse('loopback, private and link-local addresses are not accepted');
  return parsed;
}
