import { ConfigurationError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import type { A2aOptions } from '../a2a/a2a-options.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import type { LimitedHandler } from './body-limits.js';
import { checkMountPath, requirePeer } from './mount-checks.js';

/** What the A2A routes share with the other routes. */
export interface A2aMountSettings {
  limited: LimitedHandler;
  maxMessageLength: number;
  callerOf: (c: Context) => Caller;
}

/** The path of the agent card, fixed by the A2A specification. */
export const AGENT_CARD_ROUTE = '/.well-known/agent-card.json';

/** A `Host` value: a name or an IPv4 address, or an IPv6 address in brackets, with an optional port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Throws a `ConfigurationError` for A2A options the server could not serve. */
function checkA2aOptions({ path, publicUrl, trustedHosts }: A2aOptions): void {
  if (path !== undefined) checkMountPath('a2a.path', path, '/a2a');
  for (const host of trustedHosts ?? []) {
    if (typeof host !== 'string' || !HOST.test(host))
      throw new ConfigurationError({
        message: `a2a.trustedHosts holds '${String(host)}': give host names, or name:port, without a scheme or path`,
      });
  }
  if (publicUrl !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(publicUrl);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.search || parsed.hash)
      throw new ConfigurationError({
        message: `a2a.publicUrl must be an http(s) URL without query, not '${publicUrl}'`,
      });
  }
}

/**
 * Adds the A2A routes. The module that speaks A2A (and the SDK) loads on
 * the first A2A request, so that an app without `a2a` never loads them;
 * whether the SDK is installed is checked now, to fail at startup.
 */
export function mountA2a(
  app: Hono,
  backend: ServerBackend,
  options: A2aOptions,
  settings: A2aMountSettings,
): Record<string, readonly string[]> {
  checkA2aOptions(options);
  requirePeer('@a2a-js/sdk/server', '@a2a-js/sdk', 'a2a');
  const path = options.path ?? '/a2a';
  let endpoint: Promise<import('../a2a/a2a-endpoint.js').A2aEndpoint> | undefined;
  const load = () => {
    endpoint ??= import('../a2a/a2a-endpoint.js').then(({ createA2aEndpoint }) =>
      createA2aEndpoint(backend, { ...options, path, maxMessageLength: settings.maxMessageLength }),
    );
    return endpoint;
  };
  app.get(AGENT_CARD_ROUTE, async (c) => (await load()).card(c));
  app.post(
    path,
    settings.limited(async (c) => (await load()).rpc(c, settings.callerOf(c))),
  );
  return { [AGENT_CARD_ROUTE]: ['GET'], [path]: ['POST'] };
}
