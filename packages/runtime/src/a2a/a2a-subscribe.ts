import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import { TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { requireScope } from '../backend/access-checks.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import { followTurnEvents } from '../backend/turn-follow.js';
import type { TurnLogKey } from '../stores/turn-event-log.js';
import { isFinished } from '../turns/turn-record.js';
import { sessionsOf } from './a2a-caller.js';
import { findTurn, storedTask, turnMessages } from './a2a-task-reads.js';
import { endingEvents, progressUpdate, taskEvent } from './a2a-updates.js';

/** The states the specification calls interrupted: the task waits for the client. */
const INTERRUPTED: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

/**
 * `SubscribeToTask`: the task as it stands, then its updates as the turn
 * goes on (each agent call, then its answer and final state), read from the
 * app's turn event log, so from any replica when the log is shared. The
 * stream ends when the turn (or its part, when it pauses for approval)
 * ends; on a task already awaiting input it holds just the task. Needs the `sessions:read` scope with auth. A task that has ended is refused with `UnsupportedOperationError`,
 * as the specification says; so is every task when the app keeps no turn
 * events (`eventLog: false`).
 */
export async function* subscribeToTask(
  backend: Pick<ServerBackend, 'events' | 'sessionsOf' | 'isClosing'>,
  caller: Caller,
  taskId: string,
  signal: AbortSignal,
): AsyncGenerator<StreamResponse, void, undefined> {
  // Like `GET /v1/sessions/:id/turns/:turnId/events`.
  requireScope(caller.principal, 'sessions:read');
  const sessions = sessionsOf(backend, caller);
  const found = await findTurn(sessions, taskId);
  const log = backend.events;
  if (!log)
    throw new UnsupportedOperationError('This server keeps no task events: read the task with GetTask');
  if (isFinished(found.turn.status))
    throw new UnsupportedOperationError(`Task ${taskId} has ended: read it with GetTask`);
  const key: TurnLogKey = {
    tenantId: caller.tenantId,
    sessionId: found.sessionId,
    turnId: found.turn.turnId,
  };
  // The log first, then the task: an event logged in between shows in both, never in neither.
  const replay = await log.replay(key, undefined);
  const logged = replay.kind === 'events' ? replay.events : [];
  const { sessionId, turn } = await findTurn(sessions, taskId);
  const task = storedTask(sessionId, turn, await turnMessages(sessions, sessionId, turn));
  yield taskEvent(task);
  if (isFinished(turn.status)) {
    yield* endingEvents(task);
    return;
  }
  // A task awaiting the client's input (an approval) is in an interrupted state, where a stream closes:
  // the client answers with a message, whose own stream carries the rest (A2A 1.0, section 11.7).
  if (task.status && INTERRUPTED.has(task.status.state)) return;
  const ids = { taskId: task.id, contextId: task.contextId };
  const follow = followTurnEvents({
    log,
    key,
    sessions,
    backlog: [],
    after: logged.at(-1)?.eventId,
    ended: logged.at(-1)?.type === 'turn-end',
    isClosing: backend.isClosing,
    signal,
  });
  for await (const event of follow) {
    if (event.type === 'turn-end') {
      const ended = await findTurn(sessions, taskId).catch(() => undefined);
      if (!ended) throw new TaskNotFoundError(`No task ${taskId}`);
      const messages = await turnMessages(sessions, ended.sessionId, ended.turn);
      yield* endingEvents(storedTask(ended.sessionId, ended.turn, messages, 0));
      return;
    }
    const update = progressUpdate(event, ids);
    if (update) yield update;
  }
}
