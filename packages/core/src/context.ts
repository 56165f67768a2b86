import { AsyncLocalStorage } from 'node:async_hooks';
import { type ConfigView, EMPTY_CONFIG } from './config-view.js';
import { ContextMissingError } from './errors/index.js';
import type { Memory, MemoryScope } from './memory.js';

/** What the runtime provides to start a {@link RequestContext}. */
export interface RequestContextInit {
  sessionId: string;
  requestId: string;
  userId?: string;
  tenantId?: string;
  /**
   * Aborted when the turn is abandoned: the server is shutting down and its
   * grace period for running turns is over. A client that disconnects does
   * not stop the turn (its messages are still stored); an agent's own
   * `context.signal` also fires on the agent's timeout. A function is called
   * the first time the signal is read, so a signal nobody reads costs nothing.
   */
  signal: AbortSignal | (() => AbortSignal);
  /** Returns the memory of a scope; called lazily by {@link RequestContext.getMemory}. */
  memory: (scope: MemoryScope) => Memory;
  /** How many Switchboard servers called each other to get here (see {@link RequestContext.depth}); default 0. */
  depth?: number;
  /** The live configuration the request runs under (see {@link RequestContext.config}); default none. */
  config?: ConfigView;
}

const STORAGE_KEY = Symbol.for('switchboard.requestContext');
const FRAME = Symbol.for('switchboard.traceFrame');

/** What the storage holds beside a bare RequestContext: the request's and the active trace context. */
interface TraceFrame {
  readonly [FRAME]: true;
  readonly request: RequestContext | undefined;
  readonly traceContext: unknown;
}

type Store = RequestContext | TraceFrame;
type Holder = { [STORAGE_KEY]?: AsyncLocalStorage<Store> };
const holder = globalThis as Holder;
// Shared through globalThis so that duplicated copies of this package see one context (hence a branded
// frame rather than a class: `instanceof` fails across copies).
holder[STORAGE_KEY] ??= new AsyncLocalStorage<Store>();
const storage = holder[STORAGE_KEY];

function isFrame(store: Store): store is TraceFrame {
  return (store as Partial<TraceFrame>)[FRAME] === true;
}

function requestOf(store: Store | undefined): RequestContext | undefined {
  return store !== undefined && isFrame(store) ? store.request : store;
}

function frame(request: RequestContext | undefined, traceContext: unknown): Store {
  return traceContext === undefined && request !== undefined
    ? request
    : { [FRAME]: true, request, traceContext };
}

/**
 * The slot of the request's async context where Switchboard's
 * OpenTelemetry context manager keeps the active trace context, so that one
 * `AsyncLocalStorage` carries both the {@link RequestContext} and the trace
 * context: on Node 20 and 22 every active `AsyncLocalStorage` adds work to
 * every promise the process creates. It is for that context manager
 * (`setupTracing()` registers it), not for application code.
 */
export const traceContextSlot = {
  /** The active trace context, or `undefined`. */
  get(): unknown {
    const store = storage.getStore();
    return store !== undefined && isFrame(store) ? store.traceContext : undefined;
  },
  /** Runs `fn` with `traceContext` active, the RequestContext unchanged. */
  run<A extends unknown[], R>(traceContext: unknown, fn: (...args: A) => R, ...args: A): R {
    return storage.run(frame(requestOf(storage.getStore()), traceContext), fn, ...args);
  },
  /**
   * Makes `traceContext` active for the rest of the current execution and
   * what it schedules (`AsyncLocalStorage.enterWith`); returns a function
   * that restores what was active before.
   */
  enter(traceContext: unknown): () => void {
    const previous = storage.getStore();
    storage.enterWith(frame(requestOf(previous), traceContext));
    return () => {
      storage.enterWith(previous as Store);
    };
  },
};

/**
 * The context of the request being handled: who is asking, in which session,
 * and the memory to use. Available anywhere below a request (orchestrator,
 * agents, your own helpers) through {@link RequestContext.current}.
 *
 * @example
 * ```ts
 * const { sessionId, userId } = RequestContext.current();
 * const memory = RequestContext.current().getMemory('user');
 * ```
 */
export class RequestContext {
  readonly sessionId: string;
  readonly requestId: string;
  readonly userId?: string;
  readonly tenantId?: string;
  /**
   * How many Switchboard servers called each other to get here: 0 for a
   * client's request, 1 for a request a `remoteAgent` of another server
   * sent (its `x-switchboard-depth` header), and so on. Orchestrator agents
   * and remote agents count from it, so a nesting limit holds across servers.
   */
  readonly depth: number;
  /**
   * The live configuration items the request runs under (the tenant's over
   * the app-wide ones), fixed for the turn: orchestrators read their task
   * types, patterns, step rules and keywords from it, and fall back to their
   * constructor options where it has none.
   */
  readonly config: ConfigView;
  readonly #memory: (scope: MemoryScope) => Memory;
  #signal: AbortSignal | (() => AbortSignal);
  #memories?: Partial<Record<MemoryScope, Memory>>;

  constructor({
    sessionId,
    requestId,
    userId,
    tenantId,
    signal,
    memory,
    depth = 0,
    config = EMPTY_CONFIG,
  }: RequestContextInit) {
    this.sessionId = sessionId;
    this.config = config;
    this.depth = depth;
    this.requestId = requestId;
    this.userId = userId;
    this.tenantId = tenantId;
    this.#signal = signal;
    this.#memory = memory;
  }

  /**
   * Aborted when the turn is stopped (a cancel, a newer message with the
   * `interrupt` policy, a lost lease) or abandoned at server shutdown; see
   * {@link RequestContextInit.signal}. Pass it to your own I/O.
   */
  get signal(): AbortSignal {
    if (typeof this.#signal === 'function') this.#signal = this.#signal();
    return this.#signal;
  }

  /** The memory of a scope: `session` (default), `user` or `app`. */
  getMemory(scope: MemoryScope = 'session'): Memory {
    this.#memories ??= {};
    let memory = this.#memories[scope];
    if (!memory) {
      memory = this.#memory(scope);
      this.#memories[scope] = memory;
    }
    return memory;
  }

  /** The active context. Throws a clear error outside a request. */
  static current(): RequestContext {
    const context = requestOf(storage.getStore());
    if (!context) throw new ContextMissingError();
    return context;
  }

  /** The active context, or `undefined` outside a request. */
  static tryCurrent(): RequestContext | undefined {
    return requestOf(storage.getStore());
  }

  /** Runs `fn` with `context` active for everything it awaits or schedules (the active trace context kept). */
  static run<R>(context: RequestContext, fn: () => R): R {
    const store = storage.getStore();
    return storage.run(
      store !== undefined && isFrame(store) ? frame(context, store.traceContext) : context,
      fn,
    );
  }
}
