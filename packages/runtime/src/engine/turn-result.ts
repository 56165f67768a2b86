import type { MessageItem } from '@switchboard/core';
import {
  type ApprovalRecord,
  pendingApprovals,
  publicApproval,
  type TurnRecord,
} from '../turns/turn-record.js';
import type { TurnState } from './turn-state.js';
import type { TurnResult } from './turn-types.js';

/** The result of the part of a turn this process ran: `reply`, and the approvals it waits for when paused. */
export function resultOf(turn: TurnState, reply: string, pending?: readonly ApprovalRecord[]): TurnResult {
  const result: TurnResult = {
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    reply,
    status: turn.status,
    steps: turn.steps,
  };
  if (pending && pending.length > 0) result.approvals = pending.map(publicApproval);
  if (turn.usage) result.usage = turn.usage;
  if (turn.span && turn.traceId) result.traceId = turn.traceId;
  // The same as the stored turn: the error's own text only with exposeErrorDetails.
  if (turn.error) result.error = { ...turn.error };
  return result;
}

/** The result of a stored turn, as its chat request returned it (or would have). */
export function resultOfRecord(
  sessionId: string,
  record: TurnRecord,
  history: readonly MessageItem[],
  approvalMessage: string,
): TurnResult {
  const result: TurnResult = {
    sessionId,
    turnId: record.turnId,
    reply: '',
    status: record.status,
    steps: record.steps,
  };
  if (record.status === 'awaiting_approval') {
    result.reply = approvalMessage;
    result.approvals = pendingApprovals(record).map(publicApproval);
  } else {
    const start = history.findIndex((message) => message.id === record.userMessageId);
    for (let index = start + 1; start >= 0 && index < history.length; index += 1) {
      const message = history[index] as MessageItem;
      if (message.role === 'user') break;
      if (message.role === 'assistant') result.reply = message.content;
    }
  }
  if (record.usage) result.usage = record.usage;
  if (record.traceId) result.traceId = record.traceId;
  if (record.error) result.error = { ...record.error };
  return result;
}
