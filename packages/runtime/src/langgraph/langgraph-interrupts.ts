import type { AgentApprovalDecision, AgentApprovalRequest } from '../agents/agent-pause.js';
import type { ApprovalRisk } from '../turns/turn-record.js';

/** An interrupt as LangGraph reports it: `interrupt(value)` raised in a node. */
export interface LangGraphInterrupt {
  id?: string;
  value?: unknown;
}

/**
 * What a LangGraph `interrupt()` becomes: an `approval` (the turn pauses
 * until a person approves or rejects through the approvals route), or an
 * `input` request (the agent replies with the question, and its next
 * message in the session is the answer).
 */
export type LangGraphInterruptKind = 'approval' | 'input';

/**
 * What a node's `interrupt()` returns once a person decided an approval:
 * `approved`, the decision's `status` (`expired` and `withdrawn` count as
 * rejections) and the person's `comment`, if any.
 */
export interface LangGraphApprovalAnswer {
  approved: boolean;
  status: AgentApprovalDecision['status'];
  comment?: string;
}

/** The longest action name and message an interrupt puts before a person (longer ones are cut). */
export const MAX_INTERRUPT_ACTION_CHARS = 200;
/** See {@link MAX_INTERRUPT_ACTION_CHARS}. */
export const MAX_INTERRUPT_MESSAGE_CHARS = 4_000;
/** An interrupt's value is kept as the approval's structured `input` up to this size as JSON (else left out). */
export const MAX_INTERRUPT_INPUT_CHARS = 16_000;

const RISKS: readonly ApprovalRisk[] = ['low', 'medium', 'high', 'critical'];

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The default reading of an interrupt's value: `{ question: '…' }` asks the
 * user for input; anything else (a string, `{ action, message, risk, reason }`)
 * asks for approval.
 */
export function defaultInterruptKind(value: unknown): LangGraphInterruptKind {
  return typeof field(value, 'question') === 'string' ? 'input' : 'approval';
}

/** The approval request a person sees for one interrupt. */
export function approvalRequestOf({ id, value }: LangGraphInterrupt, index: number): AgentApprovalRequest {
  const action = field(value, 'action');
  const message =
    typeof value === 'string' ? value : (field(value, 'message') ?? JSON.stringify(value ?? null));
  const request: AgentApprovalRequest = {
    id: id ?? `interrupt-${index}`,
    action: cut(
      typeof action === 'string' && action !== '' ? action : 'interrupt',
      MAX_INTERRUPT_ACTION_CHARS,
    ),
    message: cut(String(message), MAX_INTERRUPT_MESSAGE_CHARS),
  };
  // The structured value is shown to the person when it is small; the message always is.
  if (
    typeof value === 'object' &&
    value !== null &&
    JSON.stringify(value).length <= MAX_INTERRUPT_INPUT_CHARS
  ) {
    request.input = value;
  }
  const risk = field(value, 'risk');
  if (RISKS.includes(risk as ApprovalRisk)) request.risk = risk as ApprovalRisk;
  const reason = field(value, 'reason');
  if (typeof reason === 'string') request.reason = cut(reason, MAX_INTERRUPT_MESSAGE_CHARS);
  return request;
}

/** The reply that asks the user for input: each pending question, one per paragraph. */
export function questionsOf(interrupts: readonly LangGraphInterrupt[]): string {
  return interrupts
    .map(({ value }) => {
      const question = field(value, 'question');
      return cut(typeof question === 'string' ? question : String(value), MAX_INTERRUPT_MESSAGE_CHARS);
    })
    .join('\n\n');
}

/** What `interrupt()` returns in the node once a person decided. */
export function approvalAnswerOf({
  approved,
  status,
  comment,
}: AgentApprovalDecision): LangGraphApprovalAnswer {
  return comment === undefined ? { approved, status } : { approved, status, comment };
}
