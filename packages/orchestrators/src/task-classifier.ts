import type { Conversation } from '@switchboard/core';

/** A task as a classifier sees it. */
export interface TaskDescription {
  /** The task name a classifier answers with. */
  name: string;
  /** What the task is about: the task's description, or else its agent's. */
  description: string;
  /** The agent that handles the task. */
  agent: string;
}

/**
 * Identifies which task a user message asks for. Resolves to one of the
 * given tasks' names, or `undefined` when none fits. An answer that is not
 * one of the names is treated like `undefined`, so a classifier backed by a
 * language model cannot route to an unknown agent. `tasks` lists only the
 * tasks whose agent may be chosen for this decision. Throwing ends the turn
 * with an error.
 *
 * Plug one into `TaskOrchestrator` through its `identifyTask` option; a
 * function of the shape `(message, tasks) => Promise<string | undefined>` is
 * all it takes, `conversation` is there for classifiers that need history.
 *
 * @example
 * ```ts
 * const byPrefix: TaskClassifier = async (message, tasks) =>
 *   tasks.find((task) => message.toLowerCase().startsWith(task.name))?.name;
 * new TaskOrchestrator({ agents, tasks, identifyTask: byPrefix });
 * ```
 */
export type TaskClassifier = (
  message: string,
  tasks: TaskDescription[],
  conversation?: Conversation,
) => Promise<string | undefined> | string | undefined;
