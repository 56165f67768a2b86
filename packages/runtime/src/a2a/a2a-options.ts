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
 * `SendStreamingMessage` / `GetTask` / `CancelTask` / `ListTasks` /
 * `SubscribeToTask` at `POST <path>` (behind `auth` like every route;
 * version 1.0 by the `A2A-Version` header or query parameter). Needs the `@a2a-js/sdk` package (an
 * optional peer dependency), loaded on the first A2A request.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, a2a: true });
 * new App({ name: 'desk', agents, a2a: { publicUrl: 'https://desk.example.com', card: { version: '2.1.0' } } });
 * new App({ name: 'desk', agents, a2a: { trustedHosts: ['desk.internal'] } }); // the card names http://desk.internal:3000/a2a when asked there
 * ```
 */
export interface A2aOptions {
  /** Where the JSON-RPC endpoint is served (default `/a2a`). */
  path?: string;
  /**
   * The URL clients reach the app at, e.g. `https://desk.example.com`; the
   * card's endpoint URL starts with it. Set it in production. Without it
   * the card names the origin it was asked at only when its `Host` is
   * trusted (a loopback name, or one of `trustedHosts`), and else the bare
   * path (`/a2a`): a `Host` header is the client's to write, and the card is
   * cached publicly.
   */
  publicUrl?: string;
  /**
   * Without `publicUrl`: the `Host` values (a name, which matches on any
   * port, or `name:port`) the card may take its origin from, besides
   * `localhost`, `127.0.0.1` and `[::1]`, e.g. `['desk.internal']`.
   */
  trustedHosts?: readonly string[];
  /** Card fields that replace the defaults. */
  card?: A2aCardFields;
}
