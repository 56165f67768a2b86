import { type Artifact, type Message, type Task, TaskState, type TaskStatus } from '@a2a-js/sdk';
import { createId } from '@switchboard/core';
import type { TurnResult } from '../engine/turn-engine.js';
import type { ApprovalRecord, TurnStatus } from '../turns/turn-record.js';
import { a2aMessage, dataPart, textPart } from './a2a-parts.js';

/**
 * How a turn's status reads as an A2A task state: a turn awaiting approval
 * needs the client's input; an interrupted turn was canceled; a turn a
 * guardrail blocked was refused.
 */
export const TASK_STATE_BY_TURN_STATUS: Readonly<Record<TurnStatus, TaskState>> = {
  running: TaskState.TASK_STATE_WORKING,
  awaiting_approval: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  limited: TaskState.TASK_STATE_COMPLETED,
  budget_exceeded: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  interrupted: TaskState.TASK_STATE_CANCELED,
  blocked: TaskState.TASK_STATE_REJECTED,
};

/** Sits between the session id and the turn id in a task id; neither id may contain it. */
const TASK_ID_SEPARATOR = '~';

/**
 * The A2A task id of a turn: the turn id, after the id of the session it
 * belongs to, so that a task id alone finds its turn on any replica.
 */
export function taskIdOf(sessionId: string, turnId: string): string {
  return `${sessionId}${TASK_ID_SEPARATOR}${turnId}`;
}

/** The session and turn a task id names, or undefined when it names none. */
export function turnOfTaskId(taskId: string): { sessionId: string; turnId: string } | undefined {
  const at = taskId.lastIndexOf(TASK_ID_SEPARATOR);
  if (at <= 0 || at === taskId.length - 1) return undefined;
  return { sessionId: taskId.slice(0, at), turnId: taskId.slice(at + 1) };
}

/**
 * A pending approval as the data part of an `input-required` status: what
 * to approve, and how to answer (a message on the task with a data part
 * `{ approvalId, decision: 'approve' | 'reject', comment? }`).
 */
export function approvalData(approval: ApprovalRecord): Record<string, unknown> {
  const data: Record<string, unknown> = {
    type: 'approval-request',
    approvalId: approval.id,
    agent: approval.agent,
    message: approval.message,
    risk: approval.risk,
    expiresAt: approval.expiresAt,
  };
  if (approval.reason !== undefined) data.reason = approval.reason;
  if (approval.tool !== undefined) data.tool = approval.tool;
  return data;
}

/** The task's status for a turn result: the answer, the pending approvals, or what went wrong. */
export function statusOf(result: TurnResult): TaskStatus {
  const state = TASK_STATE_BY_TURN_STATUS[result.status];
  const context = { contextId: result.sessionId, taskId: taskIdOf(result.sessionId, result.turnId) };
  let message: Message | undefined;
  if (result.status === 'awaiting_approval') {
    const parts = [textPart(result.reply), ...(result.approvals ?? []).map((a) => dataPart(approvalData(a)))];
    message = a2aMessage({ messageId: createId('msg'), role: 'agent', parts, ...context });
  } else if (result.status !== 'completed' && result.status !== 'running') {
    const metadata = result.error ? { errorCode: result.error.code } : undefined;
    message = a2aMessage({
      messageId: createId('msg'),
      role: 'agent',
      parts: [textPart(result.reply)],
      ...context,
      ...(metadata ? { metadata } : {}),
    });
  }
  return { state, message, timestamp: new Date().toISOString() };
}

/** The artifact holding a completed turn's answer. */
export function answerArtifact(reply: string): Artifact {
  return {
    artifactId: 'answer',
    name: 'answer',
    description: '',
    parts: [textPart(reply)],
    metadata: undefined,
    extensions: [],
  };
}

/** A turn result as an A2A task: id and context from the turn and session, state from its status. */
export function taskOf(result: TurnResult, history: Message[] = []): Task {
  const metadata: Record<string, unknown> = { turnId: result.turnId };
  if (result.traceId) metadata.traceId = result.traceId;
  return {
    id: taskIdOf(result.sessionId, result.turnId),
    contextId: result.sessionId,
    status: statusOf(result),
    artifacts:
      result.status === 'completed' || result.status === 'limited' || result.status === 'budget_exceeded'
        ? [answerArtifact(result.reply)]
        : [],
    history,
    metadata,
  };
}
