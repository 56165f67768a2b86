import { type AgentMeta, ConfigurationError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import { turnChargeOf } from './access.js';
import type { LimitedHandler } from './body-limits.js';
import type { CorsOptions } from './cors.js';
import { errorResponse } from './http-errors.js';
import { checkMountPath, requirePeer } from './mount-checks.js';

/**
 * Serves the app over the Model Context Protocol (streamable HTTP, stateless)
 * at `POST /mcp` (or `mcp.path`): one `chat` tool (`message`, optional
 * `sessionId`) that runs a turn like `POST /v1/chat` and returns the answer,
 * the session id and the turn's status (also as structured content). Behind
 * `auth` like every route, within the same body limits. Needs
 * `@modelcontextprotocol/sdk` (an optional peer dependency), loaded on the
 * first MCP request.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, mcp: true }); // POST /mcp
 * new App({ name: 'desk', agents, mcp: { path: '/tools/mcp' } });
 * ```
 */
export interface McpOptions {
  /** Where the endpoint is served (default `/mcp`). */
  path?: string;
  /**
   * Serves agents as tools too: `true` for all, or the names of some. Each
   * is named after its agent (`agent_chat` for one named `chat`), takes the
   * agent's input schema (else a `message`) and an optional `sessionId`, and
   * runs a turn that calls that agent directly, with the app's guardrails,
   * approvals, timeouts and tracing, then answers with its reply.
   */
  exposeAgents?: boolean | readonly string[];
}

/** What the MCP route shares with the other routes. */
export interface McpMountSettings {
  limited: LimitedHandler;
  maxMessageLength: number;
  callerOf: (c: Context) => Caller;
  cors?: CorsOptions;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Refuses browser requests from other sites, DNS rebinding included (a page
 * of evil.example resolved to 127.0.0.1 sends `Origin: http://evil.example`):
 * a request with an `Origin` passes only when CORS allows that origin, or
 * when it is this loopback server's own origin. MCP clients that are not
 * browsers send no `Origin`.
 */
function originAllowed(c: Context, cors: CorsOptions | undefined): boolean {
  const origin = c.req.header('origin');
  if (origin === undefined) return true;
  const allowed = cors?.origins;
  if (allowed === '*' || (Array.isArray(allowed) && allowed.includes(origin))) return true;
  try {
    const { host, hostname } = new URL(origin);
    return host === c.req.header('host') && LOOPBACK.has(hostname);
  } catch {
    return false;
  }
}

/** The agents `exposeAgents` names (all for `true`); an unknown name or a tool name clash fails now. */
function agentsToExpose(backend: ServerBackend, exposeAgents: boolean | readonly string[]): AgentMeta[] {
  if (exposeAgents === false) return [];
  const agents =
    exposeAgents === true
      ? [...backend.agents]
      : exposeAgents.map((name) => {
          const agent = backend.agents.find((candidate) => candidate.name === name);
          if (!agent)
            throw new ConfigurationError({
              message: `mcp.exposeAgents names '${name}', which is not one of the app's agents: ${backend.agents.map((candidate) => candidate.name).join(', ')}`,
            });
          return agent;
        });
  const names = new Set(['chat']);
  for (const { name } of agents) {
    const toolName = name === 'chat' ? `agent_${name}` : name;
    if (names.has(toolName))
      throw new ConfigurationError({ message: `mcp.exposeAgents: two tools would be named '${toolName}'` });
    names.add(toolName);
  }
  return agents;
}

/**
 * Adds the MCP route. The module that speaks MCP (and the SDK) loads on the
 * first MCP request, so that an app without `mcp` never loads them; whether
 * the SDK is installed is checked now, to fail at startup.
 */
export function mountMcp(
  app: Hono,
  backend: ServerBackend,
  options: McpOptions,
  settings: McpMountSettings,
): Record<string, readonly string[]> {
  const { path = '/mcp', exposeAgents = false } = options;
  checkMountPath('mcp.path', path, '/mcp');
  requirePeer('@modelcontextprotocol/sdk/server', '@modelcontextprotocol/sdk', 'mcp');
  const exposed = agentsToExpose(backend, exposeAgents);
  let endpoint: Promise<import('../mcp/mcp-endpoint.js').McpEndpoint> | undefined;
  const load = () => {
    endpoint ??= import('../mcp/mcp-endpoint.js').then(({ createMcpEndpoint }) =>
      createMcpEndpoint(backend, {
        maxMessageLength: settings.maxMessageLength,
        name: backend.name,
        exposeAgents: exposed,
      }),
    );
    return endpoint;
  };
  app.post(
    path,
    settings.limited(async (c) => {
      if (!originAllowed(c, settings.cors))
        return errorResponse(c, 403, 'forbidden_origin', 'Requests from this origin are not allowed');
      if (backend.isClosing()) return errorResponse(c, 503, 'shutting_down', 'The server is shutting down');
      return (await load()).handle(c.req.raw, settings.callerOf(c), turnChargeOf(c));
    }),
  );
  // Stateless: no stream to open with GET, no session to end with DELETE (405, as the transport specification allows).
  return { [path]: ['POST'] };
}
