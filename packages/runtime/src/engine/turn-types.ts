import type { StrategyProfile, TokenUsage } from '@switchboard/core';
import type { ApprovalRule } from '../agents/agent-contract.js';
import type { ConversationReview, Guardrail } from '../guardrails/guardrail.js';
import type { ApprovalRecord, RouteStep, TurnStatus } from '../turns/turn-record.js';
import type { TurnEvent } from './events.js';

/**
 * What a new message does when its session is busy with a running turn:
 *
 * - `wait` (default): queue behind it (up to `sessionWaitMs`, then 409). For
 *   chat UIs that send one message at a time and for clients that retry.
 * - `reject`: 409 `session_busy` at once. For clients that must not queue,
 *   e.g. a bot that would rather drop a duplicate than answer it late.
 * - `interrupt`: stop the running turn (its agents are aborted through their
 *   signals; what it stored is kept and it ends `interrupted`), then run the
 *   new message, which sees it. For chat UIs where a new message replaces
 *   the question being answered ("stop generating").
 */
export type ConcurrencyPolicy = 'wait' | 'reject' | 'interrupt';

/** Limits and defaults of the turn loop. */
export interface TurnOptions {
  /** Routing decisions per turn before the turn fails (default 10). */
  maxHops?: number;
  /** Earlier messages the orchestrator sees besides the current turn (default 50). */
  historyWindow?: number;
  /** Default per-agent timeout in milliseconds (default 60 000). */
  agentTimeoutMs?: number;
  /** How long a message waits for a busy session before a 409 (default 10 000 ms). */
  sessionWaitMs?: number;
  /** Session lease duration; renewed while the turn runs (default 30 000 ms). */
  leaseTtlMs?: number;
  /** What the user sees when a turn fails without a `userMessage` of its own. */
  failureMessage?: string;
  /**
   * Show error messages in routing steps, turn records and failed agents'
   * replies (`GET /v1/sessions/:id`, the chat response, SSE). Off by default:
   * error text may carry internals; the codes are always shown, the full
   * errors are always on the trace, and the orchestrator gets a failed agent's
   * error text in process (`metadata.errorDetail` on `lastResults`).
   */
  exposeErrorDetails?: boolean;
  /** Session memory expires after this many seconds without a turn of its session (default one day). */
  sessionIdleTtlSeconds?: number;
  /**
   * The idle time of some tenants' sessions (and their session memory), in
   * seconds, when it is not `sessionIdleTtlSeconds`: e.g. a shorter one for a
   * tenant whose data must not linger. With auth on, tenants are the keys'.
   */
  tenantSessionIdleTtlSeconds?: Readonly<Record<string, number>>;
  /** What a new message does while its session runs another turn (default `wait`); see {@link ConcurrencyPolicy}. */
  concurrency?: ConcurrencyPolicy;
  /**
   * What the next request on a session does with a turn whose replica
   * stopped mid-turn (its lease expired while it was `running`): `resume` it
   * (default: the orchestrator decides again from what was stored; a call
   * that started but stored no reply runs again, so agents with side effects
   * should be idempotent), or `fail` it (it ends with a stored error answer).
   */
  recovery?: 'resume' | 'fail';
  /**
   * What a new message does while its session's turn awaits approval:
   * `block` (default: 409 `approval_pending` with the pending approval ids)
   * or `reject` (the pending approvals are rejected, the orchestrator sees
   * the rejections and ends that turn, then the new message runs).
   */
  pendingApprovals?: 'block' | 'reject';
  /**
   * Decides, for every agent call, whether it needs a person's approval,
   * beside each agent's own `requiresApproval`: rules that are not one
   * agent's (per tenant, per risk, "everything during maintenance").
   */
  approvalPolicy?: ApprovalRule;
  /** How long an approval waits before it counts as rejected (default 86 400 s; `null`: forever). */
  approvalTtlSeconds?: number | null;
  /** The reply of a turn that paused for approval (no answer is stored until it continues). */
  approvalMessage?: string;
  /** The stored answer of an interrupted turn. */
  interruptedMessage?: string;
  /**
   * The answer when a person rejects an answer that waited for approval
   * (`routeToUser(text, { requiresApproval: true })`); the reviewer's comment
   * follows it.
   */
  answerRejectedMessage?: string;
  /**
   * Checks that may redact or block the user's message, the answer, and
   * each agent's task and reply (see {@link Guardrail}); they run in order,
   * each on what the previous one let through.
   */
  guardrails?: readonly Guardrail[];
  /**
   * Periodic reviews of the conversation (a compliance check every N
   * messages): `warn` is recorded, `escalate` makes the turn's answer wait
   * for a person's approval (see {@link ConversationReview}).
   */
  reviews?: readonly ConversationReview[];
  /** The reply when a guardrail blocks a message or an answer and gives no message of its own. */
  blockedMessage?: string;
  /**
   * Strategy profiles beside the built-in `conservative`, `exploratory` and
   * `fallback`: named limit sets (hops, a turn deadline, agent retries,
   * re-plans, rounds, fan-out, what the user gets at a limit); a limit left
   * out takes `fallback`'s value.
   */
  profiles?: Readonly<Record<string, StrategyProfile>>;
  /**
   * The profile every turn runs under unless its request asks for another of
   * the app's profiles (`metadata.profile`) or a router switches
   * (`useProfile`). Without it, turns run without a profile unless asked:
   * `maxHops` and the agents' timeouts only, no retries.
   */
  profile?: string;
  /**
   * The profiles a request may ask for (`metadata.profile`). Default: with a
   * default `profile`, only that one (a client cannot loosen the app's
   * limits); without one, any of the app's profiles.
   */
  requestProfiles?: readonly string[];
}

/** One user message to process. */
export interface TurnRequest {
  sessionId: string;
  message: string;
  userId?: string;
  /** The tenant the session belongs to: another tenant never sees it. */
  tenantId?: string;
  /** The name of the API key the request came with (traced; never the key). */
  keyName?: string;
  requestId?: string;
  /** How deep this request is in a chain of servers calling each other (`x-switchboard-depth`). */
  depth?: number;
  /**
   * The request's metadata, stored on the user message. `metadata.traceName`
   * and `metadata.tags` name and tag the turn's trace; `metadata.profile`
   * picks a strategy profile.
   */
  metadata?: Record<string, unknown>;
  /** Where the request came in (`/v1/chat`, `/v1/chat/completions`…): the turn's trace is named after it. */
  entryPoint?: string;
  /** Receives every event of the turn as it happens. */
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
   * A retried request with the same key (and the same message) returns the
   * first request's turn instead of running another one, on any replica.
   */
  idempotencyKey?: string;
  /** Overrides the app's {@link TurnOptions.concurrency} for this message. */
  concurrency?: ConcurrencyPolicy;
  /**
   * The id the turn opens with (default: a new one). A background turn's id
   * is chosen when it is queued, so that its status and events can be asked
   * for before it runs.
   */
  turnId?: string;
  /**
   * Calls this agent instead of asking the orchestrator: the turn's first
   * step calls it (the message as its task, reason "direct call"), its
   * reply is the answer. Guardrails, approvals, timeouts, retries, spans and
   * the session apply as to any turn. The MCP endpoint's agent tools use it.
   */
  directCall?: DirectCall;
}

/** An agent a request calls directly (see {@link TurnRequest.directCall}). */
export interface DirectCall {
  /** One of the orchestrator's agents. */
  agent: string;
  /** The call's structured input (checked by the agent's `input` schema), when it has one. */
  input?: unknown;
}

/** A person's answer to one approval. */
export interface ApprovalResolution {
  sessionId: string;
  approvalId: string;
  decision: 'approve' | 'reject';
  /** Shown to the orchestrator with a rejection ("rejected by the user: <comment>"). */
  comment?: string;
  /** Who decided (stored on the approval and traced). */
  userId?: string;
  tenantId?: string;
  keyName?: string;
  requestId?: string;
  /** Receives the events of the turn's continuation. */
  onEvent?: (event: TurnEvent) => void;
}

/** A request to stop a running (or paused) turn. */
export interface CancelRequest {
  sessionId: string;
  turnId: string;
  userId?: string;
  tenantId?: string;
  keyName?: string;
  requestId?: string;
}

/** The outcome of a turn (or of the part of it that ran in this request). */
export interface TurnResult {
  sessionId: string;
  turnId: string;
  /** What the user sees: the answer, or `approvalMessage` while the turn awaits approval. */
  reply: string;
  status: TurnStatus;
  steps: RouteStep[];
  /** The approvals still pending, when the turn awaits approval. */
  approvals?: ApprovalRecord[];
  /** Tokens of every model call of the turn so far (routers' and agents'), when any reported usage. */
  usage?: TokenUsage;
  /** The OpenTelemetry trace id (of this part of the turn), when tracing is on. */
  traceId?: string;
  /** The recorded error of a failed, interrupted or blocked turn. */
  error?: { code: string; message: string };
}
