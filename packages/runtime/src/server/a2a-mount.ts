import { ConfigurationError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { checkMountPath, requirePeer } from './mount-checks.js';
import type { ServerBackend } from './routes.js';

/** One skill on the agent card (A2A's `AgentSkill`, as JSON). */
export interface A2aSkillFields {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  examples?: string[];
}

/**
 * Fields of the A2A agent card that replace what the app would publish:
 * by default the app's name, a description naming its agents, one skill
 * per agent, version `1.0.0`.
 */
export interface A2aCardFields {
  name?: string;
  description?: string;
  version?: string;
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  skills?: A2aSkillFields[];
}

/**
 * Serves the app's orchestrator as an A2A agent (protocol 1.0, JSON-RPC
 * binding): the agent card at `GET /.well-known/agent-card.json` (public,
 * also with `auth`; it then names the Bearer scheme) and `SendMessage` /
 * `SendStreamingMessage` / `GetTask` / `CancelTask` at `POST <path>`
 * (behind `auth` like every route). Needs the `@a2a-js/sdk` package (an
 * optional peer dependency), loaded on the first A2A request.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, a2a: true });
 * new App({ name: 'desk', agents, a2a: { publicUrl: 'https://desk.example.com', card: { version: '2.1.0' } } });
 * ```
 */
export interface A2aOptions {
  /** Where the JSON-RPC endpoint is served (default `/a2a`). */
  path?: string;
  /**
   * The URL clients reach the app at, e.g. `https://desk.example.com`; the
   * card's endpoint URL starts with it. Default: the origin the card was
   * asked for at (the host the client used), which a proxy may rewrite.
   */
  publicUrl?: string;
  /** Card fields that replace the defaults. */
  card?: A2aCardFields;
}

/** Who an A2A request acts for, as the other routes work it out. */
export interface A2aCaller {
  tenantId?: string;
  keyName?: string;
  userId?: string;
  requestId: string;
  depth?: number;
}

/** What the A2A routes share with the other routes. */
export interface A2aMountSettings {
  limited: (handler: (c: Context) => Promise<Response>) => (c: Context) => Promise<Response>;
  maxMessageLength: number;
  callerOf: (c: Context) => A2aCaller;
}

/** The path of the agent card, fixed by the A2A specification. */
export const AGENT_CARD_ROUTE = '/.well-known/agent-card.json';

/** Throws a `ConfigurationError` for A2A options the server could not serve. */
function checkA2aOptions({ path, publicUrl }: A2aOptions): void {
  if (path !== undefined) checkMountPath('a2a.path', path, '/a2a');
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
