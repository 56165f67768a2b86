import {
  createId,
  createSecretId,
  type RequestContext,
  type ToolCall,
  type ToolMessage,
} from '@switchboard/core';
import type { Agent, ApprovalRequirement, ApprovalRule } from '../agents/agent-contract.js';
import type { AgentApprovalDecision, AgentPause, AgentResume } from '../agents/agent-pause.js';
import { isPromiseLike } from '../promise-like.js';
import type { ApprovalRecord, ApprovalRisk } from '../turns/turn-record.js';
import { isoNow } from './timestamp.js';

/** Who asked for an approval. */
type Source = ApprovalRecord['requestedBy'];

/** A call's requirement, once every rule has answered; undefined when no approval is needed. */
export interface NeededApproval {
  requestedBy: Source;
  risk: ApprovalRisk;
  reason?: string;
  ttlSeconds: number | null;
}

const RISK_ORDER: readonly ApprovalRisk[] = ['low', 'medium', 'high', 'critical'];

function normalise(answer: boolean | ApprovalRequirement | undefined): ApprovalRequirement | undefined {
  if (answer === true) return { required: true };
  if (typeof answer === 'object' && answer !== null && answer.required) return answer;
  return undefined;
}

/**
 * The approval rules of one app: each agent's `requiresApproval`, the app's
 * `approvalPolicy`, and what an orchestrator asks on a call. Built once; a
 * call is checked only when some rule could ask for approval, so apps
 * without approvals pay nothing per call.
 */
export class ApprovalGate {
  readonly #rules: ReadonlyMap<string, ApprovalRule | true>;
  readonly #policy: ApprovalRule | undefined;
  readonly #ttlSeconds: number | null;

  constructor(
    agents: ReadonlyMap<string, Agent>,
    policy: ApprovalRule | undefined,
    ttlSeconds: number | null,
  ) {
    const rules = new Map<string, ApprovalRule | true>();
    for (const [name, agent] of agents) {
      if (agent.requiresApproval === true) rules.set(name, true);
      else if (typeof agent.requiresApproval === 'function') rules.set(name, agent.requiresApproval);
    }
    this.#rules = rules;
    this.#policy = policy;
    this.#ttlSeconds = ttlSeconds;
  }

  /** Whether `call` may need approval at all (without running any rule). */
  mayRequire(call: ToolCall): boolean {
    return call.requiresApproval === true || this.#policy !== undefined || this.#rules.has(call.toolName);
  }

  /**
   * Runs the rules for one call: the orchestrator's flag, the agent's rule,
   * then the app's policy. Approval is needed when any of them says so; the
   * highest risk wins and the reasons are joined. A rule that throws fails
   * closed (approval required, risk high), since a broken check must not let
   * a risky call through.
   */
  check(
    call: ToolCall,
    context: RequestContext,
  ): NeededApproval | undefined | Promise<NeededApproval | undefined> {
    const answers: Array<
      [Source, ApprovalRequirement | undefined | Promise<ApprovalRequirement | undefined>]
    > = [];
    if (call.requiresApproval) answers.push(['orchestrator', { required: true }]);
    const rule = this.#rules.get(call.toolName);
    if (rule === true) answers.push(['agent', { required: true }]);
    else if (rule) answers.push(['agent', ask(rule, call, context)]);
    if (this.#policy) answers.push(['policy', ask(this.#policy, call, context)]);
    if (!answers.some(([, answer]) => isPromiseLike(answer))) {
      return this.#combine(answers as Array<[Source, ApprovalRequirement | undefined]>);
    }
    return Promise.all(answers.map(async ([source, answer]) => [source, await answer] as const)).then(
      (settled) => this.#combine(settled as Array<[Source, ApprovalRequirement | undefined]>),
    );
  }

  /** A pending approval record for `call`. */
  open(call: ToolCall, needed: NeededApproval): ApprovalRecord {
    const requestedAt = isoNow();
    const record: ApprovalRecord = {
      id: createSecretId('apr'),
      toolCallId: call.id,
      agent: call.toolName,
      message: call.message,
      risk: needed.risk,
      requestedBy: needed.requestedBy,
      requestedAt,
      expiresAt:
        needed.ttlSeconds === null ? null : new Date(Date.now() + needed.ttlSeconds * 1000).toISOString(),
      status: 'pending',
    };
    if (call.input !== undefined) record.input = call.input;
    if (call.thought !== undefined) record.thought = call.thought;
    if (call.reason !== undefined) record.reason = call.reason;
    if (needed.reason !== undefined) record.reason = needed.reason;
    return record;
  }

  /** The pending approval of an answer that must wait for a person (`routeToUser(text, { requiresApproval: true })`). */
  openForAnswer(call: ToolCall): ApprovalRecord {
    return this.open(call, { requestedBy: 'orchestrator', risk: 'medium', ttlSeconds: this.#ttlSeconds });
  }

  /** Pending approval records for the actions an agent paused on (`AgentPause`). */
  openFromAgent(call: ToolCall, pause: AgentPause): ApprovalRecord[] {
    const pauseId = createId('pause');
    const requestedAt = isoNow();
    return pause.requests.map((request) => {
      const ttlSeconds = request.ttlSeconds === undefined ? this.#ttlSeconds : request.ttlSeconds;
      const record: ApprovalRecord = {
        id: createSecretId('apr'),
        toolCallId: call.id,
        agent: call.toolName,
        message: request.message,
        risk: request.risk ?? 'medium',
        requestedBy: 'agent',
        requestedAt,
        expiresAt: ttlSeconds === null ? null : new Date(Date.now() + ttlSeconds * 1000).toISOString(),
        status: 'pending',
        tool: request.action,
        toolUseId: request.id,
        pauseId,
        agentState: pause.state,
      };
      if (request.input !== undefined) record.input = request.input;
      if (request.reason !== undefined) record.reason = request.reason;
      return record;
    });
  }

  #combine(answers: ReadonlyArray<[Source, ApprovalRequirement | undefined]>): NeededApproval | undefined {
    let needed: NeededApproval | undefined;
    const reasons: string[] = [];
    for (const [source, answer] of answers) {
      if (!answer) continue;
      const risk = answer.risk ?? 'medium';
      const ttlSeconds = answer.ttlSeconds === undefined ? this.#ttlSeconds : answer.ttlSeconds;
      if (answer.reason) reasons.push(answer.reason);
      if (!needed) {
        needed = { requestedBy: source, risk, ttlSeconds };
        continue;
      }
      if (RISK_ORDER.indexOf(risk) > RISK_ORDER.indexOf(needed.risk)) needed.risk = risk;
      // The strictest expiry wins: a shorter time to decide, never a longer one.
      if (ttlSeconds !== null && (needed.ttlSeconds === null || ttlSeconds < needed.ttlSeconds))
        needed.ttlSeconds = ttlSeconds;
    }
    if (needed && reasons.length > 0) needed.reason = reasons.join('; ');
    return needed;
  }
}

function ask(
  rule: ApprovalRule,
  call: ToolCall,
  context: RequestContext,
): ApprovalRequirement | undefined | Promise<ApprovalRequirement | undefined> {
  const failClosed = (error: unknown): ApprovalRequirement => ({
    required: true,
    risk: 'high',
    reason: `the approval rule failed (${error instanceof Error ? error.message : String(error)})`,
  });
  try {
    const answer = rule(call, context);
    return isPromiseLike(answer) ? Promise.resolve(answer).then(normalise, failClosed) : normalise(answer);
  } catch (error) {
    return failClosed(error);
  }
}

/** What one call of a step does, given the approvals recorded for it. */
export type CallVerdict =
  | { action: 'refuse'; approval: ApprovalRecord }
  | { action: 'wait' }
  | { action: 'run'; resume?: AgentResume };

/**
 * Decides what a call does from its approvals: a refused call (rejected or
 * expired before it ran) becomes an error reply; a call with anything
 * pending waits; otherwise it runs, and when the agent itself paused on
 * actions inside the call, it runs again with their decisions.
 */
export function verdictFor(approvals: readonly ApprovalRecord[]): CallVerdict {
  const outer = approvals.find((approval) => approval.toolUseId === undefined);
  if (outer && outer.status !== 'approved' && outer.status !== 'pending')
    return { action: 'refuse', approval: outer };
  const last = approvals.findLast((approval) => approval.toolUseId !== undefined);
  const batch = last ? approvals.filter((approval) => approval.pauseId === last.pauseId) : [];
  if (outer?.status === 'pending' || batch.some((approval) => approval.status === 'pending'))
    return { action: 'wait' };
  if (batch.length === 0) return { action: 'run' };
  return {
    action: 'run',
    resume: {
      state: batch[0]?.agentState ?? null,
      decisions: batch.map((approval) => {
        const decision: AgentApprovalDecision = {
          id: approval.toolUseId ?? '',
          approved: approval.status === 'approved',
          status: approval.status as AgentApprovalDecision['status'],
        };
        if (approval.comment !== undefined) decision.comment = approval.comment;
        return decision;
      }),
    },
  };
}

/** True when a pending approval's time is up at `now` (epoch ms). */
export function isOverdue(approval: ApprovalRecord, now: number): boolean {
  return (
    approval.status === 'pending' && approval.expiresAt !== null && Date.parse(approval.expiresAt) <= now
  );
}

/** Marks every overdue pending approval `expired`; true when any changed. */
export function expireOverdue(approvals: readonly ApprovalRecord[] | undefined, now = Date.now()): boolean {
  let changed = false;
  for (const approval of approvals ?? []) {
    if (!isOverdue(approval, now)) continue;
    approval.status = 'expired';
    approval.decidedAt = isoNow();
    changed = true;
  }
  return changed;
}

/** Marks a pending approval `withdrawn`: nobody decided, because the turn moved on (`why`). */
export function withdraw(approval: ApprovalRecord, why: string): void {
  approval.status = 'withdrawn';
  approval.decidedAt = isoNow();
  approval.comment = why;
}

/**
 * Records a person's decision on a pending approval: approved or rejected,
 * when, by whom and for whom (when known), and why.
 */
export function decide(
  approval: ApprovalRecord,
  decision: 'approve' | 'reject',
  { decidedBy, requestedFor, comment }: { decidedBy?: string; requestedFor?: string; comment?: string },
): void {
  approval.status = decision === 'approve' ? 'approved' : 'rejected';
  approval.decidedAt = isoNow();
  if (decidedBy) approval.decidedBy = decidedBy;
  if (requestedFor !== undefined) approval.requestedFor = requestedFor;
  if (comment) approval.comment = comment;
}

const REFUSAL_CODES: Readonly<Record<string, string>> = {
  rejected: 'approval_rejected',
  expired: 'approval_expired',
  withdrawn: 'approval_withdrawn',
};

/** The error `tool` message the orchestrator sees for a rejected, expired or withdrawn call. */
export function refusalMessage(approval: ApprovalRecord): ToolMessage {
  const content =
    approval.status === 'expired'
      ? `rejected: the approval expired at ${approval.expiresAt} without a decision`
      : approval.status === 'withdrawn'
        ? `not run: ${approval.comment ?? 'the approval was withdrawn'}`
        : `rejected by the user${approval.comment ? `: ${approval.comment}` : ''}`;
  return {
    id: createId('msg'),
    role: 'tool',
    name: approval.agent,
    toolCallId: approval.toolCallId,
    content,
    status: 'error',
    createdAt: isoNow(),
    metadata: {
      errorCode: REFUSAL_CODES[approval.status] ?? 'approval_rejected',
      approvalId: approval.id,
    },
  };
}

/** The call an approved approval runs: what the orchestrator decided, as stored. */
export function approvedCall(approval: ApprovalRecord): ToolCall {
  const call: ToolCall = { id: approval.toolCallId, toolName: approval.agent, message: approval.message };
  if (approval.input !== undefined) call.input = approval.input;
  if (approval.thought !== undefined) call.thought = approval.thought;
  return call;
}
