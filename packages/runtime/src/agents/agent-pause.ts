import type { ApprovalRisk } from '../turns/turn-record.js';

const MARKER = Symbol.for('switchboard.agentPause');

/** One action inside an agent call that waits for a person (e.g. one tool call of an LLM agent). */
export interface AgentApprovalRequest {
  /** Unique within the agent call, e.g. the model's tool call id; the decision comes back under it. */
  id: string;
  /** What the agent wants to do, e.g. the tool's name. */
  action: string;
  /** What the person reads, e.g. the tool and its arguments. */
  message: string;
  /** The action's structured arguments, shown to the person. */
  input?: unknown;
  /** Default `medium`. */
  risk?: ApprovalRisk;
  reason?: string;
  /** Overrides the app's `approvalTtlSeconds` (`null`: never expires). */
  ttlSeconds?: number | null;
}

/** A person's answer to one {@link AgentApprovalRequest}, as the resumed agent gets it. */
export interface AgentApprovalDecision {
  /** The request's id. */
  id: string;
  approved: boolean;
  /** `expired` when nobody decided in time, `withdrawn` when the turn moved on; both count as a rejection. */
  status: 'approved' | 'rejected' | 'expired' | 'withdrawn';
  comment?: string;
}

/** What a paused agent call gets back when it runs again: the state it saved and the decisions. */
export interface AgentResume {
  /** Exactly what the agent passed to {@link AgentPause} (as stored: JSON). */
  state: unknown;
  decisions: AgentApprovalDecision[];
}

/**
 * Thrown by an agent to pause its call until a person approves one or more
 * actions: the turn stops in state `awaiting_approval` with one approval per
 * request, and once all are resolved the agent is called again with the
 * same message and `context.resume` holding `state` and the decisions. The
 * state is stored with the turn (any replica may resume it): keep it JSON
 * and small. `llmAgent` tools with `requiresApproval` use this.
 *
 * @example
 * ```ts
 * run(message, context) {
 *   if (!context.resume) throw new AgentPause({ requests: [{ id: 'send', action: 'send-email', message }], state: { draft } });
 *   return context.resume.decisions[0]?.approved ? send(context.resume.state) : 'Not sent.';
 * }
 * ```
 */
export class AgentPause extends Error {
  readonly requests: readonly AgentApprovalRequest[];
  readonly state: unknown;
  readonly [MARKER] = true;

  constructor({ requests, state }: { requests: readonly AgentApprovalRequest[]; state?: unknown }) {
    super(
      `The agent waits for ${requests.length} approval(s): ${requests.map((request) => request.action).join(', ')}`,
    );
    this.name = 'AgentPause';
    this.requests = requests;
    this.state = state === undefined ? null : state;
  }

  /** True for an {@link AgentPause} from any copy of the package. */
  static isInstance(value: unknown): value is AgentPause {
    return typeof value === 'object' && value !== null && (value as { [MARKER]?: unknown })[MARKER] === true;
  }
}
