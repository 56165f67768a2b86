import {
  type AgentLike,
  type AgentMeta,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { clarifyingQuestion } from './clarification.js';
import { KeywordMatcher } from './keyword-matcher.js';
import { RoutingOrchestrator } from './routing-orchestrator.js';
import type { TaskClassifier, TaskDescription } from './task-classifier.js';

/** One task a {@link TaskOrchestrator} recognises. */
export interface TaskDefinition {
  /** The agent that handles the task. */
  agent: string;
  /**
   * Rules for the default, rule-based identification: strings are keywords or
   * phrases (whole words, case-insensitive, plural- and `-ing`-tolerant),
   * regular expressions are tested against the raw message.
   */
  patterns?: readonly (string | RegExp)[];
  /** What the task is, for clarifying questions and classifiers (default: the agent's description). */
  description?: string;
}

/** Options of {@link TaskOrchestrator}. */
export interface TaskOrchestratorOptions {
  /** Default `task`. */
  name?: string;
  description?: string;
  /** The agents it routes to: the agents themselves (`defineAgent`, `llmAgent`, …) or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /** Task name → definition. On equal pattern scores the task declared first wins. */
  tasks: Readonly<Record<string, TaskDefinition>>;
  /** Replaces the rule-based identification, e.g. with a classifier backed by a language model. */
  identifyTask?: TaskClassifier;
  /** The agent for messages whose task is unknown. Without one, the user is asked to clarify. */
  fallbackAgent?: string;
}

interface CompiledTask extends TaskDescription {
  patterns: readonly (string | RegExp)[];
}

function compileTasks(
  name: string,
  tasks: TaskOrchestratorOptions['tasks'],
  agents: readonly AgentMeta[],
): CompiledTask[] {
  const entries = Object.entries(tasks ?? {});
  if (entries.length === 0)
    throw new ConfigurationError({ message: `Task orchestrator '${name}' needs at least one task` });
  const known = agents.map((agent) => agent.name);
  return entries.map(([task, definition]) => {
    const agent = agents.find((candidate) => candidate.name === definition?.agent);
    if (!agent) {
      throw new ConfigurationError({
        message: `Task '${task}' of orchestrator '${name}' names unknown agent '${String(definition?.agent)}'; known agents: ${known.join(', ') || '(none)'}`,
      });
    }
    const patterns = definition.patterns ?? [];
    if (!Array.isArray(patterns) || !patterns.every((p) => typeof p === 'string' || p instanceof RegExp)) {
      throw new ConfigurationError({
        message: `Patterns of task '${task}' must be an array of strings and RegExps`,
      });
    }
    return {
      name: task,
      agent: agent.name,
      description: definition.description ?? agent.description,
      patterns,
    };
  });
}

/**
 * Maps tasks to agents: identifies the task of each user message, sends the
 * message to that task's agent, then returns the agent's answer to the user.
 *
 * Identification is rule-based by default (each task's `patterns`; the task
 * with the highest score wins, ties in declared order). Pass `identifyTask`
 * (a {@link TaskClassifier}, e.g. one backed by a language model) or override
 * {@link TaskOrchestrator.identifyTask} to identify tasks differently. An
 * unknown task goes to `fallbackAgent`, or the user is asked which task they
 * mean. Tasks whose agent is not among the decision's candidates are ignored.
 *
 * @example
 * ```ts
 * const router = new TaskOrchestrator({
 *   agents,
 *   tasks: {
 *     arithmetic: { agent: 'calculator', patterns: ['calculate', /\d\s*[-+*\/]\s*\d/] },
 *     'time-query': { agent: 'clock', patterns: ['what time', 'date'], description: 'Tell the time or date' },
 *   },
 *   fallbackAgent: 'help',
 * });
 * ```
 */
export class TaskOrchestrator extends RoutingOrchestrator {
  /** The agent that gets messages of unknown task, if any. */
  readonly fallbackAgent?: string;
  readonly #tasks: readonly CompiledTask[];
  readonly #matcher: KeywordMatcher;
  readonly #classifier?: TaskClassifier;

  constructor({
    name = 'task',
    description,
    agents,
    tasks,
    identifyTask,
    fallbackAgent,
  }: TaskOrchestratorOptions) {
    super({ name, description, agents });
    this.#tasks = compileTasks(name, tasks, this.agents);
    if (fallbackAgent !== undefined && !this.agents.some((agent) => agent.name === fallbackAgent)) {
      throw new ConfigurationError({
        message: `Fallback agent '${fallbackAgent}' of orchestrator '${name}' is not one of its agents: ${this.agents.map((a) => a.name).join(', ') || '(none)'}`,
      });
    }
    if (identifyTask !== undefined && typeof identifyTask !== 'function') {
      throw new ConfigurationError({ message: `identifyTask of orchestrator '${name}' must be a function` });
    }
    this.fallbackAgent = fallbackAgent;
    this.#classifier = identifyTask;
    this.#matcher = new KeywordMatcher(
      this.#tasks.map(({ name: task, patterns }) => ({
        name: task,
        keywords: patterns.filter((pattern) => typeof pattern === 'string'),
        patterns: patterns.filter((pattern) => pattern instanceof RegExp),
      })),
    );
  }

  /** The tasks whose agent is among `agents` (every task by default), as classifiers see them. */
  tasksFor(agents: readonly AgentMeta[] = this.agents): TaskDescription[] {
    return this.#tasks
      .filter((task) => agents.some((agent) => agent.name === task.agent))
      .map(({ name, description, agent }) => ({ name, description, agent }));
  }

  /**
   * Names the task of `message`, or `undefined`. Uses the `identifyTask`
   * option when given, the tasks' patterns otherwise. `tasks` holds the tasks
   * that may be chosen for this decision.
   */
  protected identifyTask(
    message: string,
    conversation: Conversation,
    tasks: TaskDescription[] = this.tasksFor(conversation.agents),
  ): Promise<string | undefined> | string | undefined {
    if (this.#classifier) return this.#classifier(message, tasks, conversation);
    return this.#matcher.best(message, new Set(tasks.map((task) => task.name)))?.name;
  }

  protected async selectAgent(conversation: Conversation): Promise<Decision> {
    const message = currentUserMessage(conversation).content;
    const tasks = this.tasksFor(conversation.agents);
    const answer = await this.identifyTask(message, conversation, tasks);
    const task = tasks.find((candidate) => candidate.name === answer);
    if (task) {
      const evidence = this.#matcher.score(message).find((score) => score.name === task.name)?.matched;
      return toolCall(task.agent, message, {
        input: { task: task.name },
        reason: `task '${task.name}' is handled by ${task.agent}`,
        thought: `Identified task '${task.name}'${evidence ? ` (matched ${evidence.join(', ')})` : ''}; sending it to ${task.agent}`,
      });
    }
    const unknown =
      answer === undefined ? 'No task was identified' : `'${String(answer)}' is not an available task`;
    const fallback = this.fallbackAgent;
    if (fallback !== undefined && conversation.agents.some((agent) => agent.name === fallback)) {
      return toolCall(fallback, message, {
        reason: 'unknown task; fallback agent',
        thought: `${unknown}, so the message goes to the fallback agent ${fallback}`,
      });
    }
    return this.clarify(conversation, tasks, unknown);
  }

  /** Asks the user which of the available tasks they mean. Override to change the wording. */
  protected clarify(
    _conversation: Conversation,
    tasks: readonly TaskDescription[],
    unknown: string,
  ): Decision | Promise<Decision> {
    return routeToUser(clarifyingQuestion(tasks), {
      reason: 'unknown task',
      thought: `${unknown} and there is no usable fallback agent, so ask the user`,
    });
  }
}
