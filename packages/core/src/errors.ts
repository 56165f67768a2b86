const MARKER = Symbol.for('switchboard.error');

/** A readable description of any thrown value, without ever throwing itself. */
export function describeError(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  try {
    return String(cause);
  } catch {
    return Object.prototype.toString.call(cause);
  }
}

/** Whether an error is the caller's fault (bad input, unknown session) or the system's. */
export type ErrorKind = 'user' | 'system';

/** Options every Switchboard error accepts. */
export interface SwitchboardErrorOptions {
  /** The human-readable message. */
  message: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The base of every error Switchboard throws or returns.
 *
 * `name` is the concrete class name. Recognise errors with the static
 * `isInstance()` rather than `instanceof`: it works across duplicated copies of
 * the package, because it checks a `Symbol.for` marker and the class names
 * recorded on the instance.
 *
 * @example
 * ```ts
 * if (ValidationError.isInstance(error)) console.log(error.message);
 * ```
 */
export abstract class SwitchboardError extends Error {
  /** `'user'` for errors caused by the caller's input, `'system'` otherwise. */
  abstract readonly kind: ErrorKind;
  /** A stable machine-readable code, e.g. `validation_error`. */
  abstract readonly code: string;
  /**
   * True when trying the same thing again may succeed (a timeout, a remote
   * agent's 5xx or lost connection): a strategy profile's agent retries
   * apply only to these. False for everything the caller must change first.
   */
  get retryable(): boolean {
    return false;
  }
  /** @internal class names from the concrete class up to `SwitchboardError`. */
  readonly [MARKER]: readonly string[];

  constructor({ message, cause }: SwitchboardErrorOptions) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    const names: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) {
      names.push((c as { name: string }).name);
    }
    this[MARKER] = names;
  }

  /** True when `value` is an instance of this class (or a subclass), from any copy of the package. */
  static isInstance(value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return false;
    const names = (value as { [MARKER]?: unknown })[MARKER];
    // `this` is the class it is called on (a subclass checks its own name); a detached call checks the base.
    // biome-ignore lint/complexity/noThisInStatic: the receiver is what makes `ValidationError.isInstance` specific.
    const name = typeof this === 'function' ? this.name : 'SwitchboardError';
    return Array.isArray(names) && names.includes(name);
  }
}

/** An error caused by the caller: bad input, an unknown session, a busy session. */
export abstract class UserError extends SwitchboardError {
  readonly kind = 'user' as const;
}

/** An error inside Switchboard or its plugins: a failing agent, a store outage, a routing loop. */
export abstract class SystemError extends SwitchboardError {
  readonly kind = 'system' as const;
}

/**
 * A request from another Switchboard server (its `remoteAgent`) that is
 * already as deep as servers may call each other (`x-switchboard-depth` over
 * the app's `maxCallDepth`): refused before any turn runs, so that servers
 * calling each other in a loop stop.
 */
export class CallDepthExceededError extends UserError {
  readonly code = 'nesting_depth_exceeded';
  readonly depth: number;
  readonly maxDepth: number;
  constructor({ depth, maxDepth }: { depth: number; maxDepth: number }) {
    super({
      message: `This request is ${depth} calls deep through other Switchboard servers; the limit is ${maxDepth} (maxCallDepth)`,
    });
    this.depth = depth;
    this.maxDepth = maxDepth;
  }
}

/** A guardrail refused a message, an answer, or an agent's task or reply. */
export class GuardrailBlockedError extends UserError {
  readonly code = 'blocked';
  /** The guardrail's name. */
  readonly guard: string;
  /** Where it ran: `input`, `output`, `toolInput` or `toolOutput`. */
  readonly stage: string;
  /** Why, as the guardrail said it (for operators). */
  readonly reason: string;
  constructor({
    guard,
    stage,
    reason,
    cause,
  }: { guard: string; stage: string; reason: string; cause?: unknown }) {
    super({ message: `Blocked by guardrail '${guard}' (${stage}): ${reason}`, cause });
    this.guard = guard;
    this.stage = stage;
    this.reason = reason;
  }
}

/** Input that failed validation. `issues` lists what is wrong, one line each. */
export class ValidationError extends UserError {
  readonly code = 'validation_error';
  readonly issues: readonly string[];
  constructor({
    message = 'Invalid input',
    issues = [],
    cause,
  }: { message?: string; issues?: readonly string[]; cause?: unknown }) {
    super({ message: issues.length ? `${message}: ${issues.join('; ')}` : message, cause });
    this.issues = issues;
  }
}

/** A resource (a session, an approval) that does not exist. */
export class NotFoundError extends UserError {
  readonly code = 'not_found';
  constructor({ resource, id }: { resource: string; id: string }) {
    super({ message: `${resource} '${id}' was not found` });
  }
}

/** The session is busy with another turn and did not become free in time. */
export class SessionBusyError extends UserError {
  readonly code = 'session_busy';
  /**
   * @param options.waitedMs - how long the turn waited for the session.
   * @param options.leaseLost - the turn had the session but its lease expired and another turn took it.
   */
  constructor({ sessionId, waitedMs = 0, leaseLost = false }: SessionBusyErrorOptions) {
    super({
      message: leaseLost
        ? `Session '${sessionId}' was taken over by another turn after this turn's lease expired; nothing more of this turn was stored`
        : `Session '${sessionId}' is busy with another turn (waited ${waitedMs} ms); retry when it has finished`,
    });
  }
}

/** Options of {@link SessionBusyError}. */
export interface SessionBusyErrorOptions {
  sessionId: string;
  waitedMs?: number;
  leaseLost?: boolean;
}

/** A misconfiguration detected at construction time: duplicate agent names, an unknown agent in a map. */
export class ConfigurationError extends SystemError {
  readonly code = 'configuration_error';
  constructor({ message, cause }: SwitchboardErrorOptions) {
    super({ message, cause });
  }
}

/** An orchestrator chose an agent that is not among the candidates it was given. */
export class UnknownAgentError extends SystemError {
  readonly code = 'unknown_agent';
  readonly agent: string;
  readonly knownAgents: readonly string[];
  constructor({ agent, knownAgents }: { agent: string; knownAgents: readonly string[] }) {
    super({ message: `Unknown agent '${agent}'; known agents: ${knownAgents.join(', ') || '(none)'}` });
    this.agent = agent;
    this.knownAgents = knownAgents;
  }
}

/** An orchestrator returned something that is not a `ToolCall`, a non-empty `ToolCall[]` or an `ErrorMessage`. */
export class InvalidDecisionError extends SystemError {
  readonly code = 'invalid_decision';
  constructor({ message, cause }: SwitchboardErrorOptions) {
    super({ message: `Invalid orchestrator decision: ${message}`, cause });
  }
}

/** An orchestrator threw instead of returning a decision. */
export class OrchestratorError extends SystemError {
  readonly code = 'orchestrator_error';
  constructor({ orchestrator, cause }: { orchestrator: string; cause: unknown }) {
    super({ message: `Orchestrator '${orchestrator}' failed: ${describeError(cause)}`, cause });
  }
}

/** A turn exceeded its hop budget without answering the user. */
export class MaxHopsExceededError extends SystemError {
  readonly code = 'max_hops_exceeded';
  constructor({ maxHops }: { maxHops: number }) {
    super({ message: `The turn did not reach the user within ${maxHops} routing hops` });
  }
}

/** An agent threw or failed. */
export class AgentError extends SystemError {
  readonly code: string = 'agent_error';
  readonly agent: string;
  /**
   * Kept on the failed call's `tool` message (`metadata`), beside its
   * `errorCode`: what the agent did before it failed (an orchestrator agent's
   * inner steps), for the session's history. Never the error's own text.
   */
  readonly metadata?: Record<string, unknown>;
  readonly #retryable: boolean;
  constructor({
    agent,
    message,
    cause,
    metadata,
    retryable,
  }: {
    agent: string;
    message?: string;
    cause?: unknown;
    metadata?: Record<string, unknown>;
    /** Default: the cause's own `retryable` (an error an agent throws may set it), else false. */
    retryable?: boolean;
  }) {
    super({ message: `Agent '${agent}' failed: ${message ?? describeError(cause)}`, cause });
    this.agent = agent;
    if (metadata) this.metadata = metadata;
    this.#retryable =
      retryable ??
      (typeof cause === 'object' && cause !== null && (cause as { retryable?: unknown }).retryable === true);
  }

  override get retryable(): boolean {
    return this.#retryable;
  }
}

/** An agent did not finish within its timeout. */
export class AgentTimeoutError extends AgentError {
  override readonly code = 'agent_timeout';
  readonly timeoutMs: number;
  /** True when the call ran past its fan-in grace period (`ToolCall.fanInGraceMs`) rather than its deadline. */
  readonly fanInGrace: boolean;
  constructor({
    agent,
    timeoutMs,
    fanInGrace = false,
  }: { agent: string; timeoutMs: number; fanInGrace?: boolean }) {
    super({
      agent,
      message: fanInGrace
        ? `did not reply within ${timeoutMs} ms of a sibling's reply (its fan-in grace period)`
        : `timed out after ${timeoutMs} ms`,
    });
    this.timeoutMs = timeoutMs;
    this.fanInGrace = fanInGrace;
  }

  /** A timeout is worth another try (the grace period of a fan-in is not: its siblings have answered). */
  override get retryable(): boolean {
    return !this.fanInGrace;
  }
}

/**
 * The server is shutting down and its grace period for running turns is
 * over: the reason of `RequestContext.signal` (and of an agent's
 * `ctx.signal`) when the turn is abandoned.
 */
export class ServerShutdownError extends SystemError {
  readonly code = 'server_shutdown';
  constructor() {
    super({ message: 'The server shut down before the turn finished' });
  }
}

/**
 * An agent call the server stopped because it shut down (its grace period
 * for running turns was over). The orchestrator gets it as the call's
 * reply, `Agent '<name>' was stopped: the server shut down (agent_stopped)`,
 * and decides what the user reads; it is not retried.
 */
export class AgentStoppedError extends AgentError {
  override readonly code = 'agent_stopped';
  constructor({ agent, cause }: { agent: string; cause?: unknown }) {
    super({ agent, message: 'stopped: the server shut down', cause, retryable: false });
  }
}

/** A turn ran past its strategy profile's deadline (`turnTimeoutMs`). */
export class TurnDeadlineError extends SystemError {
  readonly code = 'turn_deadline_exceeded';
  readonly timeoutMs: number;
  constructor({ timeoutMs }: { timeoutMs: number }) {
    super({ message: `The turn did not finish within its deadline of ${timeoutMs} ms` });
    this.timeoutMs = timeoutMs;
  }
}

/** A decision fanned out while the turn's strategy profile allows one call per decision. */
export class FanOutNotAllowedError extends SystemError {
  readonly code = 'fan_out_not_allowed';
  constructor({ profile, calls }: { profile: string; calls: number }) {
    super({
      message: `The '${profile}' profile allows one agent call per decision; this decision made ${calls} at once`,
    });
  }
}

/** What became of a request's writes when its store failed (see {@link StoreUnavailableError.outcome}). */
export type StoreOutcome = 'unknown' | 'not_stored';

/** A store (Redis, …) could not be reached, did not answer in time, or refused a write. */
export class StoreUnavailableError extends SystemError {
  readonly code = 'store_unavailable';
  /**
   * What became of the request's writes. `unknown` when a turn had already
   * sent a write that may have been stored (its reply was lost): retry with
   * the same `Idempotency-Key` to get the turn's result without running it
   * twice. `not_stored` when the failed command never reached Redis (the
   * connection was down) or Redis refused it before it wrote anything (out
   * of memory, a read-only replica): sending it again is safe. Undefined
   * when the store cannot tell.
   */
  readonly outcome?: StoreOutcome;
  /** The turn that was running, when there was one. */
  readonly turnId?: string;
  constructor({
    message = 'The session store is unavailable',
    cause,
    outcome,
    turnId,
  }: { message?: string; cause?: unknown; outcome?: StoreOutcome; turnId?: string }) {
    super({ message, cause });
    if (outcome) this.outcome = outcome;
    if (turnId) this.turnId = turnId;
  }
}

/** A persisted record could not be read: bad JSON, a failed schema check, an unknown schema version. */
export class CorruptRecordError extends SystemError {
  readonly code = 'corrupt_record';
  constructor({ key, detail, cause }: { key: string; detail: string; cause?: unknown }) {
    super({ message: `Stored record '${key}' is corrupt: ${detail}`, cause });
  }
}

/** `RequestContext.current()` was called outside a request. */
export class ContextMissingError extends SystemError {
  readonly code = 'context_missing';
  constructor() {
    super({
      message:
        'No RequestContext is active: RequestContext.current() can only be called while a request is being handled (inside an orchestrator, an agent or RequestContext.run())',
    });
  }
}

/** A new message (or a cancel) reached a session whose turn is waiting for approvals. */
export class ApprovalPendingError extends UserError {
  readonly code = 'approval_pending';
  readonly turnId: string;
  /** The ids of the approvals to resolve first. */
  readonly approvalIds: readonly string[];
  constructor({
    sessionId,
    turnId,
    approvalIds,
  }: { sessionId: string; turnId: string; approvalIds: readonly string[] }) {
    super({
      message: `Session '${sessionId}' is waiting for ${approvalIds.length === 1 ? 'an approval' : `${approvalIds.length} approvals`} (${approvalIds.join(', ')}); approve or reject first`,
    });
    this.turnId = turnId;
    this.approvalIds = approvalIds;
  }
}

/** An approval that was already approved, rejected or expired was resolved again. */
export class ApprovalResolvedError extends UserError {
  readonly code = 'approval_resolved';
  readonly status: string;
  constructor({ approvalId, status }: { approvalId: string; status: string }) {
    super({ message: `Approval '${approvalId}' was already resolved (${status})` });
    this.status = status;
  }
}

/** An approval was resolved after its expiry: it counts as rejected (reason `expired`) and the turn went on without it. */
export class ApprovalExpiredError extends UserError {
  readonly code = 'approval_expired';
  constructor({ approvalId, expiresAt }: { approvalId: string; expiresAt: string }) {
    super({
      message: `Approval '${approvalId}' expired at ${expiresAt}; it counts as rejected and the turn continued without it`,
    });
  }
}

/**
 * A new turn was refused because its tenant (or, without auth, the server)
 * already has the most sessions waiting for approval that it may keep
 * (`maxPendingApprovalsPerTenant` of the in-memory session store): a waiting
 * session cannot be forgotten to make room, so more would grow memory without
 * bound. Decide (or cancel) some first; expired approvals free their place.
 */
export class PendingApprovalsLimitError extends UserError {
  readonly code = 'too_many_pending_approvals';
  readonly limit: number;
  constructor({ limit }: { limit: number }) {
    super({
      message: `${limit} sessions are already waiting for approval, the most allowed; approve, reject or cancel some before starting new turns`,
    });
    this.limit = limit;
  }
}

/** A turn that is not running or paused (it has ended) was asked to stop. */
export class TurnNotActiveError extends UserError {
  readonly code = 'turn_not_active';
  constructor({ turnId, status }: { turnId: string; status: string }) {
    super({ message: `Turn '${turnId}' is not running (it is ${status})` });
  }
}

/** Why a running turn was stopped: a cancel request, or a new message with the `interrupt` policy. */
export class TurnInterruptedError extends SystemError {
  readonly code = 'turn_interrupted';
  constructor({ turnId, reason }: { turnId: string; reason: string }) {
    super({ message: `Turn '${turnId}' was interrupted: ${reason}` });
  }
}

/** An `Idempotency-Key` was sent again with a different request. */
export class IdempotencyKeyReusedError extends UserError {
  readonly code = 'idempotency_key_reused';
  constructor() {
    super({
      message:
        'This Idempotency-Key was already used for a different request; use a new key for a new message',
    });
  }
}

/** A turn whose replica stopped mid-turn was closed by the next request (the app's `recovery: 'fail'`). */
export class TurnAbandonedError extends SystemError {
  readonly code = 'turn_abandoned';
  constructor({ turnId }: { turnId: string }) {
    super({ message: `Turn '${turnId}' stopped with its replica and was closed instead of resumed` });
  }
}
