/**
 * The `App`: it wires the agents, the orchestrator, the stores, the turn
 * engine and the HTTP routes together, and runs turns in-process. What it
 * wires lives beside it: its parts (`app-parts.ts`), its agents
 * (`app-agents.ts`), what a mount builds (`app-mount.ts`), its close
 * (`app-close.ts`).
 *
 * @module
 */
import { setMaxListeners } from 'node:events';
import {
  type AgentMeta,
  ConfigurationError,
  createSecretId,
  type Orchestrator,
  ServerShutdownError,
  ValidationError,
} from '@switchboard/core';
import { type Agent, agentMeta } from './agents/agent.js';
import { agentsByName, agentsRoutedBy, orchestratorOf } from './app-agents.js';
import { closeApp } from './app-close.js';
import { appBackgroundTurns, appEngine, appRoutes, mounting } from './app-mount.js';
import type { AppOptions, ChatInput, OrchestratorInput, ServerHandle, StartOptions } from './app-options.js';
import { type AppParts, resolveAppParts } from './app-parts.js';
import { sessionIdForKey } from './backend/session-id-for-key.js';
import { BackgroundUnavailableError } from './background/background-errors.js';
import type { BackgroundTurns, QueuedTurnReceipt } from './background/background-turns.js';
import type { Schedules } from './background/schedules.js';
import { ConfigAdmin } from './config/config-admin.js';
import { configNamesOf } from './config/config-names.js';
import type {
  ApprovalResolution,
  CancelRequest,
  TurnEngine,
  TurnRequest,
  TurnResult,
} from './engine/turn-engine.js';
import { TurnSweeper } from './engine/turn-sweeper.js';
import type { Logger } from './logging/logger.js';
import { isPromiseLike } from './promise-like.js';
import { listen } from './server/node-listener.js';
import type { RoutesFetch } from './server/routes.js';
import type { MemoryStore } from './stores/memory-store.js';
import { deleteSessionData, deleteUserData } from './stores/session-deletion.js';
import type { SessionStore } from './stores/session-store.js';
import { checkStoresAtStart, storesReady } from './stores/store-settings.js';
import type { TurnEventLog } from './stores/turn-event-log.js';

export type {
  AppOptions,
  ChatInput,
  OrchestratorInput,
  ServerHandle,
  Shutdownable,
  StartOptions,
} from './app-options.js';
export { sessionIdForKey } from './backend/session-id-for-key.js';

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
  readonly #parts: AppParts;
  readonly #options: AppOptions;
  readonly #agentsByName: ReadonlyMap<string, Agent>;
  readonly #inFlight = new Set<PromiseLike<unknown>>();
  /** `chat()` turns under way: counted where `chat()` awaits them, rather than tracked in `#inFlight`. */
  #chatTurns = 0;
  /** Called when the last `chat()` turn under way ends, while `close()` waits for them. */
  #chatTurnsEnded: (() => void) | undefined;
  readonly #shutdown = new AbortController();
  #engine?: TurnEngine;
  #routes?: RoutesFetch;
  #orchestrator?: Orchestrator;
  #closing?: Promise<void>;
  #sweeper?: TurnSweeper;
  #background?: BackgroundTurns;
  #schedules?: Schedules;

  constructor(options: AppOptions) {
    const { name, agents } = options;
    if (!name) throw new ConfigurationError({ message: 'An App needs a name' });
    const byName = agentsByName(agents);
    // Every running turn, agent call and lease waiter listens to this one signal.
    setMaxListeners(0, this.#shutdown.signal);
    this.name = name;
    this.agents = agents;
    this.#agentsByName = byName;
    this.#options = options;
    const parts = resolveAppParts(options);
    this.#parts = parts;
    this.sessions = parts.sessions;
    this.memory = parts.memory;
    this.events = parts.events;
    this.logger = parts.logger;
    this.config = new ConfigAdmin(parts.configStore, parts.configCache, () =>
      configNamesOf(this.#agentsByName.keys(), this.#orchestrator),
    );
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
    const instance = orchestratorOf(orchestrator, this.name, this.agentMetas);
    const agents = agentsRoutedBy(instance, this.#agentsByName, this.name);
    this.#orchestrator = instance;
    const mount = mounting(this.name, instance, this.#parts, this.#options);
    this.#engine = appEngine(this.#parts, mount, agents, this.#shutdown.signal);
    const background = appBackgroundTurns(this.#parts, mount, this.#engine, (turn) => this.#track(turn));
    this.#background = background?.turns;
    this.#schedules = background?.schedules;
    this.#routes = appRoutes(this, this.#parts, mount, {
      engine: this.#engine,
      background: this.#background,
      schedules: this.#schedules,
      run: (request) => this.#run(request),
      checkReady: () => this.#checkReady(),
      isClosing: () => this.#closing !== undefined,
    });
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
  chat(input: ChatInput): Promise<TurnResult | QueuedTurnReceipt> {
    // `then`, not an async function: on Node 20 each promise runs the `AsyncLocalStorage` hook, and an
    // `await` would make one more for every turn.
    let turn: TurnResult | Promise<TurnResult> | Promise<QueuedTurnReceipt>;
    try {
      turn = this.#startChat(input);
    } catch (error) {
      return Promise.reject(error);
    }
    // Only a turn that had to wait is in flight (a synchronous one is over now); `close()` waits for it.
    if (!isPromiseLike(turn)) return Promise.resolve(turn);
    if (input.background) return turn;
    this.#chatTurns += 1;
    const ended = () => {
      this.#chatTurns -= 1;
      if (this.#chatTurns === 0) this.#chatTurnsEnded?.();
    };
    return turn.then(
      (result) => {
        ended();
        return result;
      },
      (error: unknown) => {
        ended();
        throw error;
      },
    );
  }

  /** {@link App.chat} up to the turn: checks the input, then queues it (background) or runs it. */
  #startChat({
    sessionId,
    message,
    idempotencyKey,
    background,
    callbackUrl,
    ...rest
  }: ChatInput): TurnResult | Promise<TurnResult> | Promise<QueuedTurnReceipt> {
    if (typeof message !== 'string' || message.length === 0)
      throw new ValidationError({ message: 'message must be a non-empty string' });
    const id =
      sessionId ?? (idempotencyKey ? sessionIdForKey(idempotencyKey, rest.tenantId) : createSecretId('ses'));
    const request: TurnRequest = { sessionId: id, message, idempotencyKey, ...rest };
    if (background) return this.#queue(request, callbackUrl);
    if (callbackUrl !== undefined)
      throw new ValidationError({ message: 'callbackUrl is for background turns (background: true)' });
    return this.#mounted().run(request);
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
  deleteSession(sessionId: string, tenantId?: string): Promise<boolean> {
    return deleteSessionData(this.sessions, this.memory, sessionId, tenantId, this.#options);
  }

  /**
   * Deletes a user's data (within a tenant, with auth): every session the
   * user started (with its session memory) and the user's memory. Resolves
   * to how many sessions were deleted.
   */
  deleteUser(userId: string, tenantId?: string): Promise<{ deletedSessions: number }> {
    return deleteUserData(this.memory, userId, tenantId, (sessionId) =>
      this.deleteSession(sessionId, tenantId),
    );
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
    const { url, port: listeningPort, stopListening } = await listen(this.fetch, port, host);
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
    return { url, port: listeningPort, close: () => this.close(stopListening) };
  }

  /**
   * Refuses new turns, waits for running turns (up to `closeGraceMs`, then
   * aborts them), and closes the stores, tracing and agents (their `close`). Idempotent.
   */
  close(stopListening?: () => Promise<void>): Promise<void> {
    this.#closing ??= closeApp(
      this.#parts,
      {
        options: this.#options,
        agents: this.agents,
        shutdown: this.#shutdown,
        inFlight: this.#inFlight,
        chatTurns: () =>
          this.#chatTurns === 0
            ? undefined
            : new Promise<void>((resolve) => {
                this.#chatTurnsEnded = resolve;
              }),
        sweeper: this.#sweeper,
        engine: () => this.#engine,
        background: () => this.#background,
      },
      stopListening,
    );
    return this.#closing;
  }

  /** A background turn that went on outside its job (an approval, a cancel) calls back too, once it has a result. */
  #calledBack(turn: Promise<TurnResult>, tenantId: string | undefined): Promise<TurnResult> {
    const background = this.#background;
    // Without callbacks nothing is looked up, and the turn's promise is the caller's as it was.
    if (!background?.callsBack) return turn;
    return turn.then((result) => {
      this.#track(background.resumed(result, { tenantId })).catch(() => {});
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

  /** Throws unless the app can serve; resolves to the stores' warnings (see {@link storesReady}). */
  async #checkReady(): Promise<readonly string[]> {
    if (this.#closing) throw new Error('The server is shutting down');
    return storesReady(this.sessions, this.memory);
  }
}
