import { type StreamResponse, type Task, TaskState, type TaskStatus } from '@a2a-js/sdk';
import type { TurnEvent, TurnEventBody } from '../engine/events.js';
import { a2aMessage, textPart } from './a2a-parts.js';

/** A status update of a task, as a stream event. */
export function statusUpdate(ids: { taskId: string; contextId: string }, status: TaskStatus): StreamResponse {
  return { payload: { $case: 'statusUpdate', value: { ...ids, status, metadata: undefined } } };
}

/** A task, as a stream's first event. */
export function taskEvent(task: Task): StreamResponse {
  return { payload: { $case: 'task', value: task } };
}

/** The last events of a task's stream: its answer as an artifact (when it has one), then its final status. */
export function endingEvents(task: Task): StreamResponse[] {
  const ids = { taskId: task.id, contextId: task.contextId };
  const events: StreamResponse[] = task.artifacts.map((artifact) => ({
    payload: {
      $case: 'artifactUpdate',
      value: { ...ids, artifact, append: false, lastChunk: true, metadata: undefined },
    },
  }));
  if (task.status) events.push(statusUpdate(ids, task.status));
  return events;
}

/** The status update a turn's event is to a task's stream (each agent call as it starts and ends), if any. */
export function progressUpdate(
  event: TurnEvent | TurnEventBody,
  ids: { taskId: string; contextId: string },
): StreamResponse | undefined {
  const progress = progressOf(event);
  if (!progress) return undefined;
  const message = a2aMessage({
    messageId: `${event.messageId}-a2a`,
    role: 'agent',
    parts: [textPart(progress.text)],
    ...ids,
    metadata: progress.metadata,
  });
  return statusUpdate(ids, {
    state: TaskState.TASK_STATE_WORKING,
    message,
    timestamp: new Date().toISOString(),
  });
}

/** The progress a client sees while the turn works: each agent call as it starts and ends. */
function progressOf(
  event: TurnEvent | TurnEventBody,
): { text: string; metadata: Record<string, unknown> } | undefined {
  if (event.type === 'agent-start')
    return { text: `Asking the ${event.agent} agent`, metadata: { event: event.type, agent: event.agent } };
  if (event.type === 'agent-end')
    return {
      text: `The ${event.agent} agent ${event.status === 'ok' ? 'answered' : 'failed'}`,
      metadata: { event: event.type, agent: event.agent, status: event.status },
    };
  return undefined;
}
