import type { ConfigVersion, StepAnnotations, TokenUsage } from '@switchboard/core';

/**
 * The life of a turn. A turn is stored when it starts (`running`) and
 * updated with every write it makes:
 *
 * ```
 * running ──► awaiting_approval ──► running ──► … ──► completed | limited | budget_exceeded | failed | interrupted | blocked
 * ```
 *
 * - `running`: deciding or calling agents (or its replica died: the next
 *   request on the session recovers it once the lease has expired).
 * - `awaiting_approval`: paused until every pending approval is resolved.
 * - `completed`: the user was answered. `failed`: the turn ended with an
 *   error answer. `interrupted`: cancelled, or superseded by a new message.
 *   `blocked`: a guardrail refused it. `limited`: it hit a limit (its
 *   hops, its deadline) under a profile whose `onLimit` is `partial`, and
 *   answered with the best partial result it had; `error.code` says which
 *   limit (`max_hops_exceeded`, `turn_deadline_exceeded`). `budget_exceeded`:
 *   its next model call could have passed a spending budget (see
 *   `BudgetOptions`), so it was not made; the turn answered with the partial
 *   result it had, and its `budget` note step says which limit.
 */
export type TurnStatus = (typeof TURN_STATUSES)[number];

/** Every state of a turn (see {@link TurnStatus}); a running turn may move to any of them. */
export const TURN_STATUSES = [
  'running',
  'awaiting_approval',
  'completed',
  'limited',
  'budget_exceeded',
  'failed',
  'interrupted',
  'blocked',
] as const;

/** The statuses of a turn that has ended; an ended turn's last message is its answer. */
export type FinishedTurnStatus = Exclude<TurnStatus, 'running' | 'awaiting_approval'>;

const TRANSITIONS: Readonly<Record<TurnStatus, readonly TurnStatus[]>> = {
  running: TURN_STATUSES,
  awaiting_approval: ['awaiting_approval', 'running', 'failed', 'interrupted'],
  completed: [],
  limited: [],
  budget_exceeded: [],
  failed: [],
  interrupted: [],
  blocked: [],
};

/** True when a turn in `status` has ended (it will never change again). */
export function isFinished(status: TurnStatus): status is FinishedTurnStatus {
  return TRANSITIONS[status].length === 0;
}

/**
 * The one place that says how a turn may move: returns `to`, or throws when
 * a turn in state `from` cannot go there (an ended turn never changes).
 */
export function transition(from: TurnStatus, to: TurnStatus): TurnStatus {
  if (!TRANSITIONS[from].includes(to)) throw new Error(`A turn cannot go from '${from}' to '${to}'`);
  return to;
}

/** One call of a routing step. */
export interface StepCall {
  toolCallId: string;
  /** The agent called, or `route_to_user`. */
  agent: string;
  /** The task text sent to the agent (not repeated for `route_to_user`, whose text is the answer). */
  message?: string;
  /** The call's structured input, when it had one. */
  input?: unknown;
  thought?: string;
  reason?: string;
  /** Set when the call waited for (or was refused) a person's approval. */
  approvalId?: string;
  /** The call's own deadline, when the orchestrator set one (`ToolCall.timeoutMs`). */
  timeoutMs?: number;
  /** The call's fan-in grace period, when the orchestrator set one (`ToolCall.fanInGraceMs`). */
  fanInGraceMs?: number;
  /** A call to an orchestrator agent: the steps of its own loop, nested calls with theirs. */
  innerSteps?: InnerStep[];
}

/** A call of a nested orchestrator agent's step, with how its agent answered. */
export interface InnerStepCall extends StepCall {
  /** How the call ended (absent for `route_to_user`). */
  status?: 'ok' | 'error';
  /** The error code of a failed call (e.g. `agent_timeout`, `nesting_depth_exceeded`). */
  errorCode?: string;
}

/** One decision of a nested orchestrator agent's loop (see `StepCall.innerSteps`). */
export interface InnerStep extends Omit<RouteStep, 'calls'> {
  calls: InnerStepCall[];
}

/** One routing decision of a turn, as recorded for `GET /v1/sessions/:id` and the chat response. */
export interface RouteStep {
  /** 0 for the first decision of the turn; a `note` shares the hop of the decision it precedes. */
  hop: number;
  /**
   * `call` one agent, `fan-out` to several, `answer` the user, `error`, or
   * `note`: something an orchestrator decided that is not a call (a chosen
   * pattern, a plan), recorded with `recordStep()`.
   */
  kind: 'call' | 'fan-out' | 'answer' | 'error' | 'note';
  /** The calls made (empty for `error` and `note`). */
  calls: StepCall[];
  /** The short label of a `note`. */
  label?: string;
  /** The error message (or code) for `kind: 'error'`. */
  error?: string;
  /** When the decision was made (ISO 8601). */
  decidedAt: string;
  /** How long the orchestrator took to decide, in milliseconds. */
  durationMs: number;
  /** What patterns and rails recorded on this step (see `StepAnnotations`). */
  annotations?: StepAnnotations;
  /** Tokens of this decision's model calls (an LLM router's) and of its agents' replies. */
  usage?: TokenUsage;
}

/** How risky a call that needs approval is, as its rule or policy says. */
export type ApprovalRisk = 'low' | 'medium' | 'high' | 'critical';

/**
 * Where an approval stands. `expired` counts as a rejection; `withdrawn`
 * means nobody decided because the turn moved on (cancelled, superseded by a
 * new message, or ended), which the orchestrator also sees as a refusal.
 */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'withdrawn';

/** One call waiting for (or resolved by) a person. Stored with its turn. */
export interface ApprovalRecord {
  /** Unguessable; the id in `POST /v1/sessions/:id/approvals/:approvalId`. */
  id: string;
  toolCallId: string;
  agent: string;
  /** The task text the agent will get. */
  message: string;
  /** The call's structured input, when it has one. */
  input?: unknown;
  thought?: string;
  reason?: string;
  risk: ApprovalRisk;
  /** Who asked for approval: the orchestrator on the call, the agent's rule, or the app's policy. */
  requestedBy: 'orchestrator' | 'agent' | 'policy';
  requestedAt: string;
  /** When the approval counts as rejected (ISO 8601), or null for never. */
  expiresAt: string | null;
  status: ApprovalStatus;
  decidedAt?: string;
  /**
   * Who resolved it: with API keys, the deciding key's user (or, for a
   * tenant-wide key, its name); without, the resolving request's `userId`.
   */
  decidedBy?: string;
  /** The user whose turn asked for it (the turn's `userId`), recorded with the decision. */
  requestedFor?: string;
  comment?: string;
  /** For an action inside an agent call (e.g. an `llmAgent` tool): the action's name. */
  tool?: string;
  /** For an action inside an agent call: its id within the call (e.g. the model's tool call id). */
  toolUseId?: string;
  /** For an action inside an agent call: shared by the approvals the agent asked for at once. */
  pauseId?: string;
  /** For an action inside an agent call: what the agent saved to continue from (JSON). */
  agentState?: unknown;
}

/** A part of a turn's trace: the first part, and one per resumption (after an approval or a crash). */
export interface TracePart {
  traceId: string;
  spanId: string;
}

/** A stored turn: its state, its routing steps, and its approvals. */
export interface TurnRecord {
  turnId: string;
  /** The id of the user message that started the turn. */
  userMessageId: string;
  status: TurnStatus;
  startedAt: string;
  /** When the turn was last written. */
  updatedAt?: string;
  /** When the turn ended (finished statuses only). */
  endedAt?: string;
  steps: RouteStep[];
  /** The OpenTelemetry trace id of the turn's latest part, when tracing is on. */
  traceId?: string;
  /** Every traced part of the turn, oldest first, when it was resumed. */
  traces?: TracePart[];
  /** What went wrong, for `failed`, `interrupted` and `blocked`. */
  error?: { code: string; message: string };
  /** Every approval the turn asked for, pending or resolved. */
  approvals?: ApprovalRecord[];
  /** How many times the turn was recovered after its replica stopped. */
  recoveries?: number;
  /** When the turn's latest part began (epoch ms): the first half of its events' ids (see `TurnEvent.eventId`). */
  part?: number;
  /** Tokens of every model call of the turn (routers' and agents'), when any reported usage. */
  usage?: TokenUsage;
  /** The strategy profile the turn runs under, when the app uses profiles. */
  profile?: string;
  /**
   * The live configuration's versions the turn started under (see
   * `docs/guides/configuration.md`), when any item was ever set: a routing change
   * traces back to the config change that made it.
   */
  configVersion?: ConfigVersion;
  /**
   * The user whose message started the turn (a user-bound key's user, or
   * the `userId` a request sent). The first turn's is the session's owner.
   */
  userId?: string;
}

/**
 * An approval as clients see it: without `agentState`, which holds an
 * agent's internals (an LLM agent's prompt and conversation so far).
 */
export function publicApproval(approval: ApprovalRecord): ApprovalRecord {
  if (approval.agentState === undefined) return { ...approval };
  const { agentState: _internal, ...shown } = approval;
  return shown;
}

/** A turn record as clients see it (its approvals through {@link publicApproval}). */
export function publicTurn(turn: TurnRecord): TurnRecord {
  return turn.approvals ? { ...turn, approvals: turn.approvals.map(publicApproval) } : turn;
}

/** The approvals of a turn still waiting for a person. */
export function pendingApprovals(turn: Pick<TurnRecord, 'approvals'>): ApprovalRecord[] {
  return turn.approvals?.filter((approval) => approval.status === 'pending') ?? [];
}

/**
 * Until when a turn keeps its session alive beyond the idle expiry: the
 * latest expiry of its pending approvals (epoch ms), `null` for never (an
 * approval without expiry), or undefined when nothing is pending.
 */
export function keepAliveUntil(turn: Pick<TurnRecord, 'approvals' | 'status'>): number | null | undefined {
  if (turn.status !== 'awaiting_approval') return undefined;
  let latest: number | undefined;
  for (const approval of pendingApprovals(turn)) {
    if (approval.expiresAt === null) return null;
    const at = Date.parse(approval.expiresAt);
    if (latest === undefined || at > latest) latest = at;
  }
  return latest;
}
