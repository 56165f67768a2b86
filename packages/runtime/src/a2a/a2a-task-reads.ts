import type { Message, Task } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { MessageItem } from '@switchboard/core';
import { SessionIdSchema } from '../backend/request-schemas.js';
import type { TurnResult } from '../engine/turn-types.js';
import type { SessionStore } from '../stores/session-store.js';
import { isFinished, pendingApprovals, type TurnRecord } from '../turns/turn-record.js';
import { a2aMessage, textPart } from './a2a-parts.js';
import { taskIdOf, taskOf, turnOfTaskId } from './a2a-task.js';

/** How many of a session's last messages are read first to find a task's messages. */
const RECENT_MESSAGES = 500;

/** The turn a task id names, in the sessions the caller may read; `TaskNotFoundError` when there is none. */
export async function findTurn(
  sessions: SessionStore,
  taskId: string,
): Promise<{ sessionId: string; turn: TurnRecord }> {
  const ids = turnOfTaskId(taskId);
  if (!ids || !SessionIdSchema.safeParse(ids.sessionId).success)
    throw new TaskNotFoundError(`No task ${taskId}`);
  const last = await sessions.lastTurn(ids.sessionId);
  const turn =
    last?.turnId === ids.turnId
      ? last
      : (await sessions.listTurns(ids.sessionId)).find((candidate) => candidate.turnId === ids.turnId);
  if (!turn) throw new TaskNotFoundError(`No task ${taskId}`);
  return { sessionId: ids.sessionId, turn };
}

/**
 * The stored messages of a turn: its user message and what followed it up
 * to the next user message. The last 500 messages hold those of any recent
 * turn; an older turn's are found in the whole history. Empty when the user
 * message is not stored (the turn was cut short before it was).
 */
export async function turnMessages(
  sessions: SessionStore,
  sessionId: string,
  turn: TurnRecord,
): Promise<MessageItem[]> {
  let messages: MessageItem[] = await sessions.read(sessionId, { limit: RECENT_MESSAGES });
  let start = messages.findIndex((item) => item.id === turn.userMessageId);
  if (start === -1 && messages.length === RECENT_MESSAGES) {
    messages = await sessions.read(sessionId);
    start = messages.findIndex((item) => item.id === turn.userMessageId);
  }
  if (start === -1) return [];
  const end = messages.findIndex((item, index) => index > start && item.role === 'user');
  return messages.slice(start, end === -1 ? undefined : end);
}

/** When a stored turn last changed, as the task's status timestamp. */
export function turnTimestamp(turn: TurnRecord): string {
  return turn.updatedAt ?? turn.endedAt ?? turn.startedAt;
}

/**
 * A stored turn as a task. Its history is the conversation of the turn (the
 * user's message and the answers to the user, not the agents' internal
 * replies), the last `historyLength` of it (all of it when unset, none at 0,
 * as the A2A specification reads the field).
 */
export function storedTask(
  sessionId: string,
  turn: TurnRecord,
  messages: readonly MessageItem[],
  historyLength?: number,
): Task {
  const conversation = messages.filter((item) => item.role === 'user' || item.role === 'assistant');
  const answer = conversation.findLast((item) => item.role === 'assistant');
  const result: TurnResult = {
    sessionId,
    turnId: turn.turnId,
    status: turn.status,
    steps: [],
    reply: isFinished(turn.status) ? (answer?.content ?? '') : '',
    approvals: pendingApprovals(turn),
  };
  if (turn.traceId) result.traceId = turn.traceId;
  if (turn.error) result.error = turn.error;
  if (turn.status === 'awaiting_approval') result.reply = 'This task awaits approval.';
  const ids = { contextId: sessionId, taskId: taskIdOf(sessionId, turn.turnId) };
  const history: Message[] = conversation.map((item) =>
    a2aMessage({
      messageId: item.id,
      role: item.role === 'user' ? 'user' : 'agent',
      parts: [textPart(item.content)],
      ...ids,
    }),
  );
  const task = taskOf(
    result,
    historyLength === undefined ? history : history.slice(Math.max(0, history.length - historyLength)),
  );
  if (task.status) task.status.timestamp = turnTimestamp(turn);
  return task;
}

/** Checks a `historyLength`: a count of messages, not below zero. */
export function checkHistoryLength(historyLength: number | undefined): number | undefined {
  if (historyLength === undefined) return undefined;
  if (!Number.isInteger(historyLength) || historyLength < 0)
    throw new RequestMalformedError('historyLength must be an integer of at least 0');
  return historyLength;
}
