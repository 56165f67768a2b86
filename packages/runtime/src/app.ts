import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { serve } from '@hono/node-server';
import { createNoopMeter, metrics as otelMetrics } from '@opentelemetry/api';
import {
  type AgentMeta,
  ConfigurationError,
  createSecretId,
  type Orchestrator,
  type OrchestratorOptions,
  ServerShutdownError,
  ValidationError,
} from '@switchboard/core';
import type { AppOptions, ChatInput, OrchestratorInput, ServerHandle, StartOptions } from './app-options.js';

export type {
  AppOptions,
  ChatInput,
  OrchestratorInput,
  ServerHandle,
  Shutdownable,
  StartOptions,
} from './app-options.js';

import { type Agent, agentMeta } from './agents/agent.js';
import { withHostedAgents } from './agents/hosted-agents.js';
import { publishesGraph } from './agents/published-graph.js';
import { conversationIndex } from './backend/conversation-index.js';
import { appBackground } from './background/app-background.js';
import { BackgroundUnavailableError } from './background/background-errors.js';
import { BackgroundMetrics } from './background/background-metrics.js';
import type { BackgroundTurns, QueuedTurnReceipt } from './background/background-turns.js';
import type { Schedules } from './background/schedules.js';
import { appBudgets } from './budgets/app-budgets.js';
import { checkBudgetOptions } from './budgets/budget-options.js';
import { ConfigAdmin } from './config/config-admin.js';
import { ConfigCache } from './config/config-cache.js';
import { configNamesOf } from './config/config-names.js';
import type { ConfigStore } from './config/config-store.js';
import { InMemoryConfigStore } from './config/in-memory-config-store.js';
import { TraceNaming } from './engine/trace-labels.js';
import {
  type ApprovalResolution,
  type CancelRequest,
  TurnEngine,
  type TurnRequest,
  type TurnResult,
} from './engine/turn-engine.js';
import { TurnSweeper } from './engine/turn-sweeper.js';
import { type Logger, resolveLogger } from './logging/logger.js';
import { EngineMetrics, METER_NAME } from './metrics/engine-metrics.js';
import { HttpMetrics } from './metrics/http-metrics.js';
import { type AppMetrics, appMetrics } from './metrics/prometheus-metrics.js';
import { isPromiseLike } from './promise-like.js';
import { clientAddressOf } from './server/client-address.js';
import { checkCorsOptions } from './server/cors.js';
import { unexpectedErrorLog } from './server/request-log.js';
import { createRoutes, type RoutesFetch } from './server/routes.js';
import { InMemoryMemoryStore } from './stores/in-memory-memory-store.js';
import { InMemorySessionStore } from './stores/in-memory-session-store.js';
import { InMemoryTurnEventLog } from './stores/in-memory-turn-event-log.js';
import { memoryNamespace, userSessionsNamespace } from './stores/memory-binding.js';
import type { MemoryStore } from './stores/memory-store.js';
import { InMemoryRateLimiter, type RateLimiter } from './stores/rate-limiter.js';
import type { SessionStore } from './stores/session-store.js';
import { checkStoresAtStart, storeWarnings } from './stores/store-settings.js';
import { tenantSessions } from './stores/tenant-sessions.js';
import type { TurnEventLog } from './stores/turn-event-log.js';
import { userSessions } from './stores/user-sessions.js';

/**
 * The session id for a first message sent with an `Idempotency-Key` and no
 * session id: derived from the key (and tenant), so that a retry of the same
 * request lands in the same session. As unguessable as the key itself.
 */
export function sessionIdForKey(idempotencyKey: string, tenantId = ''): string {
  const digest = createHash('sha256')
    .update(`switchboard:idempotency:${tenantId}:${idempotencyKey}`)
    .digest('hex');
  return `ses_${digest.slice(0, 32)}`;
}

function isOrchestratorClass(
  input: OrchestratorInput,
): input is new (
  options: OrchestratorOptions,
) => Orchestrator {
  return typeof input === 'function';
}

/**
 * Hosts agents and an orchestrator, runs turns, and serves the HTTP API.
 *
 * @example
 * ```ts
 * const app = new App({ name: 'demo', agents: [echo] });
 * const server = await app.start(MyOrchestrator, { port: 3000 });
 * // … later
 * await server.close();
 * ```
 */
export class App {
  readonly name: string;
  readonly agents: readonly Agent[];
  readonly sessions: SessionStore;
  readonly memory: MemoryStore;
  /** Where the turns' events are kept for rejoining clients (undefined with `eventLog: false`). */
  readonly events: TurnEventLog | undefined;
  /** What the app logs through (see {@link AppOptions.logger}); yours too. */
  readonly logger: Logger;
  /**
   * The live configuration: task types, patterns, step rules, keywords and
   * profiles as validated, versioned items per tenant, which the
   * orchestrators read on every turn (see `docs/guides/configuration.md`); served
   * at `/v1/config`.
   */
  readonly config: ConfigAdmin;
  readonly #configStore: ConfigStore;
  readonly #configCache: ConfigCache;
  readonly #options: AppOptions;
  readonly #agentsByName: ReadonlyMap<string, Agent>;
  readonly #inFlight = new Set<PromiseLike<unknown>>();
  /** `chat()` turns under way: counted where `chat()` awaits them, rather than tracked in `#inFlight`. */
  #chatTurns = 0;
  /** Called when the last `chat()` turn under way ends, while `close()` waits for them. */
  #chatTurnsEnded: (() => void) | undefined;
  readonly #shutdown = new AbortController();
  readonly #rateLimiter: RateLimiter;
  readonly #metrics: AppMetrics | undefined;
  #engine?: TurnEngine;
  #routes?: RoutesFetch;
  #orchestrator?: Orchestrator;
  #closing?: Promise<void>;
  #sweeper?: TurnSweeper;
  #background?: BackgroundTurns;
  #schedules?: Schedules;

  constructor(options: AppOptions) {
    const { name, agents, sessionStore, memoryStore, sessionIdleTtlSeconds } = options;
    if (!name) throw new ConfigurationError({ message: 'An App needs a name' });
    const byName = new Map<string, Agent>();
    for (const agent of agents) {
      if (byName.has(agent.name)) {
        throw new ConfigurationError({
          message: `Two agents are named '${agent.name}'; agent names must be unique`,
        });
      }
      byName.set(agent.name, agent);
    }
    // Every running turn, agent call and lease waiter listens to this one signal.
    setMaxListeners(0, this.#shutdown.signal);
    this.name = name;
    this.agents = agents;
    this.#agentsByName = byName;
    this.#options = options;
    this.sessions = sessionStore ?? new InMemorySessionStore({ idleTtlSeconds: sessionIdleTtlSeconds });
    this.memory = memoryStore ?? new InMemoryMemoryStore();
    this.events = options.eventLog === false ? undefined : (options.eventLog ?? new InMemoryTurnEventLog());
    this.#rateLimiter = options.rateLimiter ?? new InMemoryRateLimiter();
    this.#configStore = options.configStore ?? new InMemoryConfigStore();
    this.#configCache = new ConfigCache(this.#configStore);
    this.config = new ConfigAdmin(this.#configStore, this.#configCache, () =>
      configNamesOf(this.#agentsByName.keys(), this.#orchestrator),
    );
    if (options.cors) checkCorsOptions(options.cors);
    // A trusted proxy that is neither an address nor a range fails now rather than at mount.
    clientAddressOf(options.rateLimit?.trustedProxies);
    if (options.budgets !== undefined) checkBudgetOptions(options.budgets);
    this.logger = resolveLogger(options.logger, options.logLevel);
    const { metrics } = options;
    this.#metrics = metrics ? appMetrics(metrics === true ? {} : metrics, { appName: name }) : undefined;
  }

  /** The metadata of every hosted agent, as given to an orchestrator class. */
  get agentMetas(): AgentMeta[] {
    return this.agents.map(agentMeta);
  }

  /** The orchestrator in use, once mounted. */
  get orchestrator(): Orchestrator | undefined {
    return this.#orchestrator;
  }

  /**
   * Binds the orchestrator without listening on a port, so that
   * {@link App.fetch} and {@link App.chat} work (tests, other servers).
   * Fails at once when the orchestrator knows an agent the app does not host.
   */
  mount(orchestrator: OrchestratorInput): this {
    if (this.#orchestrator)
      throw new ConfigurationError({ message: `App '${this.name}' already has an orchestrator` });
    const instance = isOrchestratorClass(orchestrator)
      ? new orchestrator({ name: this.name, agents: this.agentMetas })
      : orchestrator;
    // A graph brings its function nodes as agents of its own: hosted beside the app's.
    const agents = withHostedAgents(this.#agentsByName, instance, `App '${this.name}'`);
    const unknown = instance.agents.filter((agent) => !agents.has(agent.name)).map((agent) => agent.name);
    if (unknown.length > 0) {
      throw new ConfigurationError({
        message: `Orchestrator '${instance.name}' routes to agents the app does not host: ${unknown.join(', ')}; hosted agents: ${[...agents.keys()].join(', ')}`,
      });
    }
    const { memory, sessions } = this;
    this.#orchestrator = instance;
    const meter = this.#metrics?.meter ?? otelMetrics.getMeter(METER_NAME);
    // No meter provider anywhere: nothing would be recorded, so neither the turn nor the request path records.
    const recording = meter !== createNoopMeter();
    const budgets = appBudgets(this.#options.budgets, this.#options.budgetCounters, {
      logger: this.logger,
      meter: recording ? meter : undefined,
      appName: this.name,
    });
    this.#engine = new TurnEngine(
      {
        budgets,
        orchestrator: instance,
        agents,
        sessions,
        memory,
        signal: this.#shutdown.signal,
        logger: this.logger,
        metrics: recording
          ? new EngineMetrics(meter, { app: this.name, orchestrator: instance.name })
          : undefined,
        naming: new TraceNaming(this.name, instance.name, this.#options.traceTags),
        eventLog: this.events,
        config: this.#configCache,
      },
      this.#options,
    );
    const background = appBackground(this.#options.background, {
      engine: this.#engine,
      memory,
      logger: this.logger,
      track: (turn) => this.#track(turn),
      exposeErrorDetails: this.#options.exposeErrorDetails,
      concurrency: this.#options.concurrency ?? 'wait',
      metrics: recording ? new BackgroundMetrics(meter, this.name) : undefined,
    });
    this.#background = background?.turns;
    this.#schedules = background?.schedules;
    this.#routes = createRoutes(
      {
        name: this.name,
        orchestratorName: instance.name,
        agents: this.agentMetas,
        ...(publishesGraph(instance) ? { graph: instance.view } : {}),
        ...(this.#engine.agentStats ? { agentStats: this.#engine.agentStats } : {}),
        sessions,
        chat: (request) => this.#run(request),
        resolveApproval: (resolution) => this.resolveApproval(resolution),
        cancelTurn: (request) => this.cancelTurn(request),
        sessionIdForKey: (key, tenantId) => sessionIdForKey(key, tenantId),
        conversations: conversationIndex(memory, this.#options.sessionIdleTtlSeconds ?? 86_400),
        sessionsOf: (tenantId) => this.#mounted().sessionsOf(tenantId),
        events: this.events,
        background: this.#background,
        schedules: this.#schedules,
        turnStatus: (sessionId, turnId, tenantId, userId) => {
          if (this.#background) return this.#background.status(sessionId, turnId, tenantId, userId);
          const view = this.#mounted().sessionsOf(tenantId);
          const store = userId === undefined ? view : userSessions(view, userId);
          return this.#mounted().readTurn(store, sessionId, turnId);
        },
        deleteSession: (sessionId, tenantId) => this.deleteSession(sessionId, tenantId),
        deleteUser: (userId, tenantId) => this.deleteUser(userId, tenantId),
        auth: this.#options.auth,
        approvers: this.#options.approvers,
        rateLimit: this.#options.rateLimit,
        rateLimiter: this.#rateLimiter,
        checkReady: () => this.#checkReady(),
        isClosing: () => this.#closing !== undefined,
        log: unexpectedErrorLog(this.logger),
        logger: this.logger,
        cors: this.#options.cors,
        metrics: this.#metrics,
        httpMetrics: recording ? new HttpMetrics(meter) : undefined,
        usage: budgets && ((tenantId, sessionId, totals) => budgets.report(tenantId, sessionId, totals)),
        config: this.config,
      },
      this.#options,
    );
    return this;
  }

  /**
   * Handles a fetch `Request` with the HTTP API (requires {@link App.mount} or {@link App.start}).
   * `env` is the server's bindings, such as `@hono/node-server`'s `{ incoming, outgoing }`.
   */
  fetch = (request: Request, env?: object): Response | Promise<Response> => {
    if (!this.#routes)
      throw new ConfigurationError({
        message: `App '${this.name}' has no orchestrator: call mount() or start() first`,
      });
    return this.#routes(request, env);
  };

  /** Sends a request to the HTTP API in-process, like Hono's `app.request()`. */
  request(path: string, init?: RequestInit): Response | Promise<Response> {
    return this.fetch(new Request(new URL(path, 'http://localhost'), init));
  }

  /**
   * Runs one turn in-process, without HTTP. The result's `status` says how
   * it ended: `completed`, `failed`, `interrupted`, or `awaiting_approval`
   * (then `approvals` lists what to resolve with {@link App.resolveApproval}).
   */
  chat(input: ChatInput & { background: true }): Promise<QueuedTurnReceipt>;
  chat(input: ChatInput & { background?: false }): Promise<TurnResult>;
  async chat({
    sessionId,
    message,
    idempotencyKey,
    background,
    callbackUrl,
    ...rest
  }: ChatInput): Promise<TurnResult | QueuedTurnReceipt> {
    if (typeof message !== 'string' || message.length === 0)
      throw new ValidationError({ message: 'message must be a non-empty string' });
    const id =
      sessionId ?? (idempotencyKey ? sessionIdForKey(idempotencyKey, rest.tenantId) : createSecretId('ses'));
    const request: TurnRequest = { sessionId: id, message, idempotencyKey, ...rest };
    if (background) return this.#queue(request, callbackUrl);
    if (callbackUrl !== undefined)
      throw new ValidationError({ message: 'callbackUrl is for background turns (background: true)' });
    const turn = this.#mounted().run(request);
    // Only a turn that had to wait is in flight (a synchronous one is over now); `close()` waits for it.
    if (!isPromiseLike(turn)) return turn;
    this.#chatTurns += 1;
    try {
      return await turn;
    } finally {
      this.#chatTurns -= 1;
      if (this.#chatTurns === 0) this.#chatTurnsEnded?.();
    }
  }

  /** The app's schedules (undefined with `background: false`): messages run as background turns on a timer. */
  get schedules(): Schedules | undefined {
    this.#mounted();
    return this.#schedules;
  }

  /** The background turns (undefined with `background: false`): their status, list and cancel. */
  get background(): BackgroundTurns | undefined {
    this.#mounted();
    return this.#background;
  }

  /**
   * Approves or rejects one pending approval, as `POST /v1/sessions/:id/approvals/:approvalId`
   * does. When it was the turn's last pending approval, the turn continues
   * (approved calls run, rejected ones reach the orchestrator as error
   * replies) and the result is the turn's, as from {@link App.chat}.
   *
   * @throws NotFoundError for an unknown approval; ApprovalResolvedError when
   *   it was already resolved; ApprovalExpiredError when it expired (it then
   *   counts as rejected, and the turn went on without it).
   *
   * @example
   * ```ts
   * const paused = await app.chat({ sessionId, message: 'refund order 42' });
   * if (paused.status === 'awaiting_approval') {
   *   const done = await app.resolveApproval({ sessionId, approvalId: paused.approvals![0]!.id, decision: 'approve' });
   * }
   * ```
   */
  resolveApproval(resolution: ApprovalResolution): Promise<TurnResult> {
    return this.#track(this.#calledBack(this.#mounted().resolveApproval(resolution), resolution.tenantId));
  }

  /**
   * Stops a running or paused turn, on whichever replica runs it: its
   * agents are aborted through their signals, what it stored is kept, and
   * it ends `interrupted`. Resolves with the stopped turn.
   *
   * @throws NotFoundError for an unknown turn; TurnNotActiveError when it had already ended.
   */
  cancelTurn(request: CancelRequest): Promise<TurnResult> {
    return this.#track(this.#calledBack(this.#mounted().cancel(request), request.tenantId));
  }

  /**
   * Deletes a session's messages, turns and session-scoped memory, waiting
   * for a running turn first. With a tenant, only that tenant's session.
   */
  async deleteSession(sessionId: string, tenantId?: string): Promise<boolean> {
    const { leaseTtlMs = 30_000, sessionWaitMs = 10_000 } = this.#options;
    const sessions = tenantId === undefined ? this.sessions : tenantSessions(this.sessions, tenantId);
    const lease = await sessions.acquireLease(sessionId, { ttlMs: leaseTtlMs, waitMs: sessionWaitMs });
    try {
      const existed = await sessions.delete(sessionId);
      await this.memory.clear(memoryNamespace('session', { sessionId, tenantId }));
      return existed;
    } finally {
      await Promise.resolve(lease.release()).catch(() => {});
    }
  }

  /**
   * Deletes a user's data (within a tenant, with auth): every session the
   * user started (with its session memory) and the user's memory. Resolves
   * to how many sessions were deleted.
   */
  async deleteUser(userId: string, tenantId?: string): Promise<{ deletedSessions: number }> {
    const index = userSessionsNamespace(userId, tenantId);
    const ids = ((await this.memory.get(index, 'ids')) as string[] | undefined) ?? [];
    let deletedSessions = 0;
    for (const sessionId of ids) if (await this.deleteSession(sessionId, tenantId)) deletedSessions += 1;
    await this.memory.clear(memoryNamespace('user', { sessionId: '', userId, tenantId }));
    await this.memory.clear(index);
    return { deletedSessions };
  }

  /**
   * Mounts the orchestrator, checks the stores' settings (a Redis that may
   * evict keys fails the start with a `ConfigurationError`) and listens for
   * HTTP requests.
   */
  async start(
    orchestrator: OrchestratorInput,
    { port = 3000, host = '127.0.0.1' }: StartOptions = {},
  ): Promise<ServerHandle> {
    this.mount(orchestrator);
    await checkStoresAtStart(this.sessions, this.memory, this.logger);
    const { server, address } = await new Promise<{
      server: ReturnType<typeof serve>;
      address: { port: number };
    }>((resolve, reject) => {
      const server = serve({ fetch: this.fetch, port, hostname: host }, (info) =>
        resolve({ server, address: info }),
      );
      server.once('error', reject);
    });
    // A request Node cannot even parse (a non-numeric Content-Length, say) still gets the JSON error shape.
    server.on('clientError', (_error: Error, socket: import('node:net').Socket) => {
      if (!socket.writable) return;
      const body = JSON.stringify({ error: { code: 'bad_request', message: 'Malformed HTTP request' } });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
    if (this.#options.sweeper !== false) {
      const engine = this.#mounted();
      this.#sweeper = new TurnSweeper(
        this.sessions,
        (sessionId, tenantId, waitMs) => this.#track(engine.recover(sessionId, tenantId, waitMs)),
        this.logger,
        this.#options.sweeper,
      );
      this.#sweeper.start();
    }
    const urlHost = host.includes(':') ? `[${host}]` : host;
    const stopListening = () =>
      new Promise<void>((resolve) => {
        const closeIdle = () => (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        // Keep-alive connections become idle only once their last response is sent.
        const sweep = setInterval(closeIdle, 50);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        closeIdle();
      });
    return {
      url: `http://${urlHost}:${address.port}`,
      port: address.port,
      close: () => this.close(stopListening),
    };
  }

  /**
   * Refuses new turns, waits for running turns (up to `closeGraceMs`, then
   * aborts them), and closes the stores, tracing and agents (their `close`). Idempotent.
   */
  close(stopListening?: () => Promise<void>): Promise<void> {
    this.#closing ??= (async () => {
      const listening = stopListening?.();
      // No new recoveries; one under way is a turn in flight like any other.
      const sweeping = this.#sweeper?.stop();
      // No new background jobs (a drain): those not taken stay queued for other replicas.
      const draining = this.#background?.stop();
      const { closeGraceMs = 10_000 } = this.#options;
      const grace = setTimeout(() => this.#shutdown.abort(new ServerShutdownError()), closeGraceMs);
      await sweeping;
      const chatTurns =
        this.#chatTurns === 0
          ? undefined
          : new Promise<void>((resolve) => {
              this.#chatTurnsEnded = resolve;
            });
      await Promise.allSettled([...this.#inFlight, chatTurns, draining]);
      clearTimeout(grace);
      this.#engine?.close();
      this.#configCache.close();
      // Followers of turns' streams end now, or the server would wait for them to stop listening.
      const events = this.events?.close?.();
      await listening;
      await Promise.allSettled([
        this.sessions.close?.(),
        this.memory.close?.(),
        this.#rateLimiter.close?.(),
        this.#options.budgetCounters?.close?.(),
        this.#configStore.close?.(),
        events,
        this.#background?.close(this.#options.closeGraceMs),
        this.#options.tracing?.shutdown(),
        this.#metrics?.shutdown(),
        // Their connections (MCP servers, say) are no longer needed once no turn runs.
        ...this.agents.map((agent) => agent.close?.()),
      ]);
    })();
    return this.#closing;
  }

  /** A background turn that went on outside its job (an approval, a cancel) calls back too, once it has a result. */
  #calledBack(turn: Promise<TurnResult>, tenantId: string | undefined): Promise<TurnResult> {
    const background = this.#background;
    // Without callbacks nothing is looked up, and the turn's promise is the caller's as it was.
    if (!background?.callsBack) return turn;
    return turn.then((result) => {
      this.#track(background.resumed(result, tenantId)).catch(() => {});
      return result;
    });
  }

  #queue(request: TurnRequest, callbackUrl: string | undefined): Promise<QueuedTurnReceipt> {
    this.#mounted();
    if (!this.#background) throw new BackgroundUnavailableError();
    if (this.#closing) throw new ServerShutdownError();
    return this.#background.submit(request, callbackUrl);
  }

  /** Runs a turn; only a turn that had to wait is in flight (a synchronous one is over when this returns). */
  #run(request: TurnRequest): TurnResult | Promise<TurnResult> {
    const turn = this.#mounted().run(request);
    return isPromiseLike(turn) ? this.#track(turn) : turn;
  }

  #mounted(): TurnEngine {
    if (!this.#engine)
      throw new ConfigurationError({
        message: `App '${this.name}' has no orchestrator: call mount() or start() first`,
      });
    return this.#engine;
  }

  /** Keeps `work` in flight until it settles, so that `close()` waits for it. */
  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const settle = () => this.#inFlight.delete(work);
    work.then(settle, settle);
    return work;
  }

  /** Throws unless the app can serve; resolves to the stores' warnings (see {@link storeWarnings}). */
  async #checkReady(): Promise<readonly string[]> {
    if (this.#closing) throw new Error('The server is shutting down');
    const [warnings] = await Promise.all([
      storeWarnings(this.sessions, this.memory),
      this.sessions.ping?.(),
      this.memory.ping?.(),
    ]);
    return warnings;
  }
}
