/**
 * What an `App` is made with and answers: its options, where it
 * listens, what `app.chat` takes.
 *
 * @module
 */
import type { Orchestrator, OrchestratorOptions } from '@switchboard/core';
import type { A2aOptions } from './a2a/a2a-options.js';
import type { Agent } from './agents/agent.js';
import type { ApproversPolicy } from './backend/approvers.js';
import type { AuthOptions } from './backend/principal.js';
import type { AppBackgroundOptions } from './background/app-background.js';
import type { InMemoryTurnQueue } from './background/in-memory-turn-queue.js';
import type { BudgetCounters } from './budgets/budget-counters.js';
import type { BudgetOptions } from './budgets/budget-options.js';
import type { CallbackSender } from './callbacks/callback-sender.js';
import type { ConfigStore } from './config/config-store.js';
import type { TurnEvent } from './engine/events.js';
import type { ConcurrencyPolicy, TurnOptions } from './engine/turn-engine.js';
import type { SweeperOptions, TurnSweeper } from './engine/turn-sweeper.js';
import type { ErrorCallback, Logger, LogLevel } from './logging/logger.js';
import type { MetricsOptions } from './metrics/prometheus-metrics.js';
import type { RateLimitOptions } from './server/access.js';
import type { apiKeys } from './server/auth.js';
import type { ConsoleOptions } from './server/console-ui.js';
import type { CorsOptions } from './server/cors.js';
import type { DocsOptions } from './server/docs-ui.js';
import type { McpOptions } from './server/mcp-mount.js';
import type { ServerLimits } from './server/routes.js';
import type { InMemoryTurnEventLog } from './stores/in-memory-turn-event-log.js';
import type { MemoryStore } from './stores/memory-store.js';
import type { RateLimiter } from './stores/rate-limiter.js';
import type { SessionStore } from './stores/session-store.js';
import type { TurnEventLog } from './stores/turn-event-log.js';

/** Something to flush and shut down with the app, such as the handle returned by `setupTracing()`. */
export interface Shutdownable {
  shutdown(): Promise<void>;
}

/** Options of `App`. */
export interface AppOptions extends TurnOptions, ServerLimits {
  /** The app's name, used in the OpenAPI document and as the default orchestrator name. */
  name: string;
  /** The agents the app hosts. */
  agents: readonly Agent[];
  /**
   * Tags every turn's trace carries (Langfuse's trace tags), besides
   * `app:<name>`, `orchestrator:<name>`, `agent:<name>` for each agent the
   * turn called, and a request's `metadata.tags`.
   */
  traceTags?: readonly string[];
  /** Where conversations live (default: in memory). */
  sessionStore?: SessionStore;
  /** Where `getMemory()` values live (default: in memory). */
  memoryStore?: MemoryStore;
  /**
   * Where each turn's events are kept, so that a client can rejoin a
   * turn's stream (`GET /v1/sessions/:id/turns/:turnId/events`) and replay
   * a finished turn's events (default: in this process, see
   * {@link InMemoryTurnEventLog}; `createRedisStores` gives one every
   * replica shares). `false`: events go to the request's own stream only.
   */
  eventLog?: TurnEventLog | false;
  /**
   * How a started app recovers the turns a stopped replica left running,
   * without waiting for the user's next message: a sweep at start-up and
   * every `intervalMs`, on one replica at a time (default: every 10 s, for
   * turns not written for 5 s; with a store shared by replicas, such as
   * Redis's; see {@link TurnSweeper}). `false`: only the next message (or a
   * retried request) recovers a stranded turn.
   */
  sweeper?: SweeperOptions | false;
  /**
   * Background turns (`POST /v1/chat` with `background: true`, or
   * `app.chat({ background: true })`): queued at once, run by whichever
   * replica takes the job, read at `GET /v1/sessions/:id/turns/:turnId`,
   * their results POSTed to a `callbackUrl` when `callbacks` is set (the
   * signing secret and limits of a {@link CallbackSender}, or one; see
   * `docs/guides/callbacks.md`) (default:
   * on, queued in this process, see {@link InMemoryTurnQueue}; BullMQ across
   * replicas with `bullmqTurnQueue` from `@switchboard/runtime/bullmq`).
   * `false`: background turns are refused (400).
   */
  background?: AppBackgroundOptions | false;
  /**
   * Who may call the API. Without it the server is open (a session id is the
   * capability to use that session). With it, every route but the public
   * ones needs a credential, and sessions, memory and rate limits belong to
   * the caller's tenant. See {@link apiKeys}.
   */
  auth?: AuthOptions;
  /**
   * Who may decide approvals, with `auth` (the decider is always the
   * deciding key's identity, never a `userId` the request claims). Default:
   * keys with the `approvals:decide` scope, and never a user-bound key on
   * its own user's turn. Without `auth`, whoever calls decides, as today.
   * See {@link ApproversPolicy}.
   */
  approvers?: ApproversPolicy;
  /**
   * With `auth`: turns per minute per API key (a key's own limit overrides
   * it; a batch of MCP tool calls counts each), failed authentications and
   * requests to the public routes per client address, and the proxies whose
   * `X-Forwarded-For` is believed. 429 with `Retry-After` past a limit. See
   * {@link RateLimitOptions} for the defaults.
   */
  rateLimit?: RateLimitOptions;
  /** Where request counts live (default: this process; `createRedisStores` gives one shared by every replica). */
  rateLimiter?: RateLimiter;
  /**
   * Spending limits on model calls per turn, session and tenant, with a
   * price table for cost (see {@link BudgetOptions} and `docs/guides/budgets.md`).
   * A turn whose next model call could pass one ends `budget_exceeded`.
   * Checked when the app is made. Off by default.
   */
  budgets?: BudgetOptions;
  /** Where session and tenant spending is counted (default: this process; `createRedisStores` gives counters every replica shares). */
  budgetCounters?: BudgetCounters;
  /**
   * Where the live configuration items live, see {@link App.config}
   * (default: this process; `createRedisStores` gives one shared by every
   * replica, which tells each replica of every change).
   */
  configStore?: ConfigStore;
  /** Flushed and shut down by `close()`, e.g. the result of `setupTracing()`. */
  tracing?: Shutdownable;
  /**
   * How long `close()` waits for running turns before abandoning them
   * (default 10 000 ms). Then their running agents are aborted with a
   * `ServerShutdownError`, and the orchestrator gets each call's reply as an
   * `agent_stopped` error and answers the turn.
   */
  closeGraceMs?: number;
  /**
   * Where the app logs: one line per HTTP request, every failed turn with its
   * error and stack, unexpected errors. A pino logger, or any object with
   * pino's `error`/`warn`/`info`/`debug`/`child` methods (default: a pino
   * logger at `logLevel` writing JSON lines to stdout, made when the app is).
   * A function `(error) => void` ({@link ErrorCallback}, deprecated) is still
   * accepted for this release and gets the error of each error line.
   *
   * @example
   * ```ts
   * import { pino } from 'pino';
   * new App({ name: 'desk', agents, logger: pino({ level: 'warn' }) });
   * ```
   */
  logger?: Logger | ErrorCallback;
  /** The level of the default logger (default `info`; `silent` logs nothing). Ignored when `logger` is given. */
  logLevel?: LogLevel;
  /** Lets browser clients on these origins call the API (CORS). Off by default. */
  cors?: CorsOptions;
  /**
   * Serves an API reference page for `GET /openapi.json` at `/docs` (or
   * `docs.path`), its assets from the installed `swagger-ui-dist` package
   * (an optional peer dependency), nothing from a CDN. Off by default.
   */
  docs?: boolean | DocsOptions;
  /**
   * Serves the console (chat, routing timeline, sessions, agents, approvals)
   * at `/` (or `console.path`), built ahead of time in the installed
   * `@switchboard/console` package (an optional peer dependency), nothing
   * from a CDN. Off by default. See {@link ConsoleOptions}.
   */
  console?: boolean | ConsoleOptions;
  /**
   * Serves the app's metrics (turns by status, turn and agent-call latency,
   * decisions per turn, agent errors by code, held leases) in the Prometheus
   * text format at `GET /metrics` (or `metrics.path`), behind `auth` when it
   * is on, and pushes them over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT`
   * (or `metrics.otlp`) says where. Needs `@opentelemetry/sdk-metrics`,
   * `@opentelemetry/exporter-prometheus` and, for OTLP,
   * `@opentelemetry/exporter-metrics-otlp-http` (optional peer dependencies). Off by
   * default: the metrics then go to the global OpenTelemetry meter provider,
   * if one was registered before the app was mounted. See {@link MetricsOptions}.
   */
  metrics?: boolean | MetricsOptions;
  /**
   * Serves the orchestrator as an A2A agent: its agent card at
   * `/.well-known/agent-card.json` and the JSON-RPC endpoint at `/a2a` (or
   * `a2a.path`), where an A2A task is a turn and its context a session.
   * Needs `@a2a-js/sdk` (an optional peer dependency). Off by default. See
   * {@link A2aOptions}.
   */
  a2a?: boolean | A2aOptions;
  /**
   * Serves the orchestrator over the Model Context Protocol at `POST /mcp`
   * (or `mcp.path`): a `chat` tool that runs a turn like `POST /v1/chat`,
   * and, with `mcp.exposeAgents`, a tool per agent that calls it directly,
   * behind `auth` like every route. Needs `@modelcontextprotocol/sdk` (an
   * optional peer dependency). Off by default. See {@link McpOptions}.
   */
  mcp?: boolean | McpOptions;
}

/** An orchestrator instance, or a class the app constructs with its agents. */
export type OrchestratorInput = Orchestrator | (new (options: OrchestratorOptions) => Orchestrator);

/** Where to listen. */
export interface StartOptions {
  /** Port to listen on; 0 picks a free one (default 3000). */
  port?: number;
  /** Interface to bind (default `127.0.0.1`). */
  host?: string;
}

/** A running server. */
export interface ServerHandle {
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  url: string;
  port: number;
  /** Stops accepting requests, lets running turns finish, then closes stores and tracing. */
  close(): Promise<void>;
}

/** What `App.chat` accepts. */
export interface ChatInput {
  message: string;
  sessionId?: string;
  userId?: string;
  tenantId?: string;
  metadata?: Record<string, unknown>;
  onEvent?: (event: TurnEvent) => void;
  /**
   * Also streams to `onEvent`, before this message's own turn, the events of
   * the session's earlier turn that this message makes continue (recovered
   * after its replica stopped, or continued once its pending approvals were
   * withdrawn): its `turn-start` says `resumed`, and its `turn-end` does not
   * end the dialog. `/v1/chat` streams turn it on; consumers that make one
   * reply of the events (the OpenAI-compatible API, A2A, MCP) leave it off.
   */
  streamEarlierTurn?: boolean;
  /**
   * Makes the message safe to retry: a second call with the same key (and
   * message) returns the first call's turn instead of running another, on
   * any replica. Without a `sessionId`, the session id is derived from the
   * key, so that the retry finds the same session.
   */
  idempotencyKey?: string;
  /** What to do when the session is busy with another turn (default: the app's `concurrency`). */
  concurrency?: ConcurrencyPolicy;
  /** Queues the turn instead of running it now (see `App.chat`). */
  background?: boolean;
  /** With `background`: where its result is POSTed when it ends or pauses for approval (needs the app's `background.callbacks`). */
  callbackUrl?: string;
}
