import {
  type AgentCard,
  type CancelTaskRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
  TaskState,
} from '@a2a-js/sdk';
import {
  A2AError,
  ContentTypeNotSupportedError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { createSecretId, TurnNotActiveError } from '@switchboard/core';
import { z } from 'zod';
import { requireScope } from '../backend/access-checks.js';
import { SessionIdSchema, TurnIdSchema } from '../backend/request-schemas.js';
import type { ServerBackend } from '../backend/server-backend.js';
import { outcomeOf, startTurn } from '../backend/turn-events.js';
import { MAX_FOLLOWERS } from '../backend/turn-follow.js';
import type { TurnEvent } from '../engine/events.js';
import type { ApprovalResolution, TurnRequest, TurnResult } from '../engine/turn-types.js';
import { isFinished, pendingApprovals } from '../turns/turn-record.js';
import { callerOf, sessionsOf, signalOf } from './a2a-caller.js';
import { a2aErrorOf } from './a2a-errors.js';
import { a2aMessage, dataOf, textOf, textPart } from './a2a-parts.js';
import { subscribeToTask } from './a2a-subscribe.js';
import { taskIdOf, taskOf } from './a2a-task.js';
import { listTasks } from './a2a-task-list.js';
import { checkHistoryLength, findTurn, storedTask, turnMessages } from './a2a-task-reads.js';
import { endingEvents, progressUpdate, statusUpdate, taskEvent } from './a2a-updates.js';

/** A message's answer to one pending approval: `{ approvalId, decision, comment? }` in a data part. */
const ApprovalDecisionSchema = z.object({
  approvalId: TurnIdSchema,
  decision: z.enum(['approve', 'reject']),
  comment: z.string().max(2_000).optional(),
});
type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** What the handler needs besides the backend. */
export interface A2aHandlerSettings {
  /** Longest accepted message text in characters. */
  maxMessageLength: number;
  /** Where turns say they came in (the endpoint's path), for their trace name. */
  entryPoint: string;
  /** The card `getAgentCard` returns (the card route builds its own per request). */
  card: () => AgentCard;
}

/** What one message asks for: a new turn, or the continuation of a turn awaiting approval. */
type Plan =
  | { kind: 'turn'; request: TurnRequest; userMessage: Message }
  | { kind: 'approval'; resolutions: ApprovalResolution[]; userMessage: Message };

/**
 * Serves the orchestrator over A2A: the task is the turn (its id names the
 * session and the turn), the context is the session. A message without a
 * task id runs a turn in the context's session (a new session without
 * one); a message on a task awaiting approval carries the decisions as data
 * parts and continues the turn. Turns run through the same backend as
 * `POST /v1/chat`, under the caller's tenant.
 */
export class SwitchboardA2aHandler implements A2ARequestHandler {
  readonly #backend: ServerBackend;
  readonly #settings: A2aHandlerSettings;
  /** `SubscribeToTask` streams open now, at most {@link MAX_FOLLOWERS}. */
  #subscribers = 0;

  constructor(backend: ServerBackend, settings: A2aHandlerSettings) {
    this.#backend = backend;
    this.#settings = settings;
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.#settings.card();
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new UnsupportedOperationError('This agent has no extended agent card');
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    try {
      const plan = await this.#plan(params, context);
      const result =
        plan.kind === 'turn' ? await this.#backend.chat(plan.request) : await this.#resolve(plan);
      return taskOf(result, [withTask(plan.userMessage, result)]);
    } catch (error) {
      throw a2aErrorOf(error, this.#backend.log);
    }
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let turn: Awaited<ReturnType<typeof startTurn>>;
    let userMessage: Message;
    try {
      const plan = await this.#plan(params, context);
      userMessage = plan.userMessage;
      turn = await startTurn((onEvent) =>
        plan.kind === 'turn'
          ? this.#backend.chat({ ...plan.request, onEvent })
          : this.#resolve(plan, onEvent),
      );
    } catch (error) {
      throw a2aErrorOf(error, this.#backend.log);
    }
    let ids: { taskId: string; contextId: string } | undefined;
    for await (const batch of turn.batches()) {
      for (const event of batch) {
        if (!ids) {
          ids = { taskId: taskIdOf(event.sessionId, event.turnId), contextId: event.sessionId };
          const task: Task = {
            id: ids.taskId,
            contextId: ids.contextId,
            status: {
              state: TaskState.TASK_STATE_WORKING,
              message: undefined,
              timestamp: new Date().toISOString(),
            },
            artifacts: [],
            history: [{ ...userMessage, ...ids }],
            metadata: { turnId: event.turnId },
          };
          yield taskEvent(task);
        }
        const update = progressUpdate(event, ids);
        if (update) yield update;
      }
    }
    const { result, failure } = await outcomeOf(turn);
    if (!ids) throw a2aErrorOf(failure ?? new Error('The turn ended without starting'), this.#backend.log);
    if (!result) {
      // The stream has started: the failure becomes the task's last state, its detail goes to the log only.
      const { message: text } = a2aErrorOf(failure, this.#backend.log);
      const message = a2aMessage({
        messageId: `${ids.taskId}-failed`,
        role: 'agent',
        parts: [textPart(text)],
        ...ids,
      });
      yield statusUpdate(ids, {
        state: TaskState.TASK_STATE_FAILED,
        message,
        timestamp: new Date().toISOString(),
      });
      return;
    }
    yield* endingEvents(taskOf(result));
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    try {
      const historyLength = checkHistoryLength(params.historyLength);
      const sessions = sessionsOf(this.#backend, callerOf(context));
      const { sessionId, turn } = await findTurn(sessions, params.id);
      return storedTask(sessionId, turn, await turnMessages(sessions, sessionId, turn), historyLength);
    } catch (error) {
      throw a2aErrorOf(error, this.#backend.log);
    }
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    try {
      const { sessionId, turn } = await findTurn(sessionsOf(this.#backend, callerOf(context)), params.id);
      return taskOf(await this.#backend.cancelTurn({ sessionId, turnId: turn.turnId, ...callerOf(context) }));
    } catch (error) {
      // A2A's own error for a task that already ended (not a malformed request).
      if (TurnNotActiveError.isInstance(error)) throw new TaskNotCancelableError((error as Error).message);
      throw a2aErrorOf(error, this.#backend.log);
    }
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    try {
      const caller = callerOf(context);
      // Like `GET /v1/sessions`: listing reads sessions the key did not necessarily open.
      requireScope(caller.principal, 'sessions:read');
      return await listTasks(sessionsOf(this.#backend, caller), params);
    } catch (error) {
      throw a2aErrorOf(error, this.#backend.log);
    }
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    if (this.#subscribers >= MAX_FOLLOWERS)
      throw new A2AError({ message: 'Too many tasks are followed on this server; retry later' });
    this.#subscribers += 1;
    try {
      yield* subscribeToTask(this.#backend, callerOf(context), params.id, signalOf(context));
    } catch (error) {
      throw a2aErrorOf(error, this.#backend.log);
    } finally {
      this.#subscribers -= 1;
    }
  }

  async createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError('Push notifications are not supported');
  }

  async getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError('Push notifications are not supported');
  }

  async listTaskPushNotificationConfigs(): Promise<never> {
    throw new PushNotificationNotSupportedError('Push notifications are not supported');
  }

  async deleteTaskPushNotificationConfig(): Promise<void> {
    throw new PushNotificationNotSupportedError('Push notifications are not supported');
  }

  /** Reads the message and decides what it asks for, refusing what it cannot be. */
  async #plan(params: SendMessageRequest, context: ServerCallContext): Promise<Plan> {
    const { message } = params;
    if (!message) throw new RequestMalformedError('The request has no message');
    for (const part of message.parts) {
      const kind = part.content?.$case;
      if (kind !== 'text' && kind !== 'data')
        throw new ContentTypeNotSupportedError('This agent accepts text and data parts only');
    }
    const caller = callerOf(context);
    const decisions: ApprovalDecision[] = [];
    const data: unknown[] = [];
    for (const value of dataOf(message.parts)) {
      const decision = ApprovalDecisionSchema.safeParse(value);
      if (decision.success) decisions.push(decision.data);
      else data.push(value);
    }
    // Structured input the agents can read: data parts that are not decisions travel as JSON text.
    const text = [textOf(message.parts), ...data.map((value) => JSON.stringify(value))]
      .filter((piece) => piece.length > 0)
      .join('\n');
    if (text.length > this.#settings.maxMessageLength)
      throw new RequestMalformedError(
        `The message is longer than ${this.#settings.maxMessageLength} characters`,
      );

    if (message.taskId) {
      const { sessionId, turn } = await findTurn(sessionsOf(this.#backend, caller), message.taskId);
      if (message.contextId && message.contextId !== sessionId)
        throw new RequestMalformedError(`Task ${message.taskId} belongs to another context`);
      if (turn.status !== 'awaiting_approval') {
        const hint = isFinished(turn.status)
          ? 'it has ended: send a new message (with the same contextId, and no taskId) to go on'
          : 'it is still working';
        throw new UnsupportedOperationError(`Task ${message.taskId} takes no input: ${hint}`);
      }
      const pending = new Set(pendingApprovals(turn).map((approval) => approval.id));
      if (decisions.length === 0)
        throw new RequestMalformedError(
          `Task ${message.taskId} awaits approval: answer with a data part { approvalId, decision: 'approve' | 'reject', comment? } for ${[...pending].join(', ')}`,
        );
      const unknown = decisions.find((decision) => !pending.has(decision.approvalId));
      if (unknown)
        throw new RequestMalformedError(`Approval ${unknown.approvalId} is not pending on this task`);
      const resolutions = decisions.map(({ approvalId, decision, comment }) => {
        const resolution: ApprovalResolution = { sessionId, approvalId, decision, ...caller };
        if (comment !== undefined) resolution.comment = comment;
        return resolution;
      });
      return { kind: 'approval', resolutions, userMessage: message };
    }
    if (decisions.length > 0)
      throw new RequestMalformedError(
        'An approval decision answers a task: send it with the taskId of the task awaiting input',
      );
    if (text.length === 0) throw new RequestMalformedError('The message has no text');
    const sessionId = message.contextId ? parseContextId(message.contextId) : createSecretId('ses');
    const request: TurnRequest = {
      sessionId,
      message: text,
      entryPoint: this.#settings.entryPoint,
      ...caller,
    };
    return { kind: 'turn', request, userMessage: message };
  }

  /** Resolves every decision of the message; the turn goes on after the last one. */
  async #resolve(plan: Extract<Plan, { kind: 'approval' }>, onEvent?: (event: TurnEvent) => void) {
    const last = plan.resolutions.length - 1;
    for (const [index, resolution] of plan.resolutions.entries()) {
      if (index < last) await this.#backend.resolveApproval(resolution);
      else return await this.#backend.resolveApproval(onEvent ? { ...resolution, onEvent } : resolution);
    }
    throw new RequestMalformedError('No approval decision to apply');
  }
}

function parseContextId(contextId: string): string {
  const parsed = SessionIdSchema.safeParse(contextId);
  if (!parsed.success)
    throw new RequestMalformedError('contextId must be 1-128 characters: letters, digits, _ - . :');
  return parsed.data;
}

/** The client's message as the task's history keeps it: on the task, in its context. */
function withTask(message: Message, result: TurnResult): Message {
  return { ...message, taskId: taskIdOf(result.sessionId, result.turnId), contextId: result.sessionId };
}
