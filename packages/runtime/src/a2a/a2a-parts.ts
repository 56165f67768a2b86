import { type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';

/** The text of a message's or artifact's text parts, joined by newlines. */
export function textOf(parts: readonly Part[] | undefined): string {
  const texts: string[] = [];
  for (const part of parts ?? []) if (part.content?.$case === 'text') texts.push(part.content.value);
  return texts.join('\n');
}

/** The values of a message's data parts. */
export function dataOf(parts: readonly Part[] | undefined): unknown[] {
  const values: unknown[] = [];
  for (const part of parts ?? []) if (part.content?.$case === 'data') values.push(part.content.value);
  return values;
}

/** A text part, as the SDK's types want it. */
export function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    metadata: undefined,
    filename: '',
    mediaType: 'text/plain',
  };
}

/** A data part (a JSON value), as the SDK's types want it. */
export function dataPart(value: unknown): Part {
  return {
    content: { $case: 'data', value },
    metadata: undefined,
    filename: '',
    mediaType: 'application/json',
  };
}

/** A message with the given parts. */
export function a2aMessage({
  messageId,
  role,
  parts,
  contextId = '',
  taskId = '',
  metadata,
}: {
  messageId: string;
  role: 'user' | 'agent';
  parts: Part[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
}): Message {
  return {
    messageId,
    contextId,
    taskId,
    role: role === 'user' ? Role.ROLE_USER : Role.ROLE_AGENT,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The states after which a task never changes again. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** A task's answer: the text of its artifacts, else of its status message. */
export function answerOf(task: Task): string {
  const artifacts = task.artifacts
    .map((artifact) => textOf(artifact.parts))
    .filter((text) => text.length > 0);
  if (artifacts.length > 0) return artifacts.join('\n');
  return textOf(task.status?.message?.parts);
}
