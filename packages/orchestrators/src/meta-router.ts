import { trace } from '@opentelemetry/api';
import {
  AbstractOrchestrator,
  annotateStep,
  ConfigurationError,
  type ConfigView,
  type Conversation,
  type Decision,
  type Orchestrator,
  RequestContext,
} from '@switchboard/core';
import { clientResolver } from '@switchboard/runtime/internal';
import { makeChoice, type RouteChoosing } from './meta-route-choice.js';
import type { MetaRouterOptions } from './meta-route-options.js';
import { recallRoute, recordRoute } from './meta-route-record.js';
import {
  checkTaskTypes,
  configuredSetup,
  type PatternEntry,
  patternEntries,
  type RouteSetup,
  routeSetup,
} from './meta-route-setup.js';
import { type ChosenRoute, GENERAL_TASK, type TaskType, withFraming } from './meta-route-view.js';

export type {
  MetaRouteChoice,
  MetaRouteChooser,
  MetaRouteInput,
  MetaRouterOptions,
} from './meta-route-options.js';
export type { MetaRouterPattern } from './meta-route-setup.js';

const DEFAULT_INSTRUCTIONS = "Classify the user's request as one of the task types below.";

/**
 * Routes each turn in two steps: it picks a task type among the configured
 * ones, then one of that type's patterns (skipped when it has one), and lets
 * that pattern's orchestrator run the turn with the type's framing. The
 * choice is made on the turn's first decision by a model (a strict schema
 * over the names, an invalid answer retried with feedback, then the default
 * pattern) or by a `choose` function (no model, works offline). It is
 * recorded as a `meta-route` note step (candidates, choice, rationale,
 * confidence) and on the decision span, and kept in session memory for the
 * turn's later decisions, so they reach the same pattern on any replica.
 *
 * The pattern sees only its own agents (among the decision's candidates),
 * and the framing as a `user` message right after the turn's user message,
 * with `metadata.framing: true` (see {@link taskFramingOf}).
 *
 * **Live configuration.** `task-type` items (named after the task type)
 * replace, add or disable task types, and `pattern` items narrow a
 * pattern's agents, change its `whenToUse` or disable it, from the next
 * turn on, on every replica (see `docs/guides/configuration.md`); without items,
 * the constructor's options hold. Prompts and schemas are built once per
 * configuration.
 *
 * @example
 * ```ts
 * const router = new MetaRouter({
 *   agents,
 *   taskTypes: [
 *     { name: 'research', description: 'Questions that need sources', framing: 'Cite your sources.', patterns: ['supervisor', 'react'] },
 *     { name: 'chat', description: 'Small talk and simple questions', patterns: ['react'] },
 *   ],
 *   patterns: { react: new LlmOrchestrator({ agents, model, client }), supervisor: { orchestrator: supervisor, whenToUse: 'several independent sub-questions' } },
 *   defaultPattern: 'react',
 *   model: 'gpt-4o-mini',
 *   client,
 * });
 * ```
 */
export class MetaRouter extends AbstractOrchestrator {
  readonly taskTypes: readonly TaskType[];
  readonly defaultPattern: string;
  readonly model?: string;
  /** The names of its patterns (what `pattern` items and task types may name). */
  readonly patternNames: readonly string[];
  /** The orchestrators of its patterns. */
  readonly patternOrchestrators: readonly Orchestrator[];
  readonly #patterns: Map<string, PatternEntry>;
  readonly #givenTaskTypes: readonly TaskType[];
  /** What it chooses with: its `choose` function or its model, and the default pattern. */
  readonly #choosing: RouteChoosing;
  readonly #instructions?: string;
  readonly #setup: RouteSetup;
  /** The setup of each live configuration with task-type or pattern items, built once per configuration. */
  readonly #configured = new WeakMap<ConfigView, RouteSetup>();
  readonly #memoryKey: string;

  constructor({
    name = 'meta',
    description,
    agents,
    taskTypes,
    patterns,
    defaultPattern,
    choose,
    model,
    client,
    apiKey,
    baseURL,
    instructions = DEFAULT_INSTRUCTIONS,
    historyWindow = 12,
    maxRetries = 1,
    temperature,
  }: MetaRouterOptions) {
    super({ name, description, agents });
    const owner = `MetaRouter '${name}'`;
    this.#patterns = patternEntries(owner, this.agents, patterns);
    this.defaultPattern = defaultPattern ?? [...this.#patterns.keys()][0]!;
    if (!this.#patterns.has(this.defaultPattern)) {
      throw new ConfigurationError({
        message: `${owner}: defaultPattern '${this.defaultPattern}' is not one of its patterns: ${[...this.#patterns.keys()].join(', ')}`,
      });
    }
    const general: TaskType = {
      name: GENERAL_TASK,
      description: 'Any request',
      patterns: [this.defaultPattern],
    };
    this.taskTypes = Object.freeze(taskTypes?.length ? [...taskTypes] : [general]);
    this.#givenTaskTypes = taskTypes?.length ? this.taskTypes : [];
    this.patternNames = Object.freeze([...this.#patterns.keys()]);
    this.patternOrchestrators = Object.freeze(
      [...this.#patterns.values()].map((entry) => entry.orchestrator),
    );
    checkTaskTypes(owner, this.taskTypes, this.#patterns);
    if (choose !== undefined && typeof choose !== 'function') {
      throw new ConfigurationError({ message: `${owner}: choose must be a function` });
    }
    if (choose && model !== undefined) {
      throw new ConfigurationError({
        message: `${owner}: give either a choose function or a model, not both`,
      });
    }
    const needsChoice = this.taskTypes.length > 1 || this.taskTypes.some((type) => type.patterns.length > 1);
    if (needsChoice && !choose && (typeof model !== 'string' || model === '')) {
      throw new ConfigurationError({
        message: `${owner} has several task types or patterns to choose from: give it a model or a choose function`,
      });
    }
    if (!Number.isInteger(historyWindow) || historyWindow < 1) {
      throw new ConfigurationError({ message: `${owner}: historyWindow must be a positive integer` });
    }
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new ConfigurationError({ message: `${owner}: maxRetries must be 0 or more` });
    }
    this.#memoryKey = `meta-router:${name}`;
    let resolveClient: RouteChoosing['client'];
    if (!choose && model) {
      this.model = model;
      resolveClient = clientResolver(owner, { client, apiKey, baseURL });
      this.#instructions = instructions;
    }
    this.#choosing = {
      defaultPattern: this.defaultPattern,
      choose,
      client: resolveClient,
      model: this.model,
      historyWindow,
      maxRetries,
      temperature,
    };
    this.#setup = routeSetup(this.taskTypes, this.#patterns, this.#instructions);
  }

  /** The task types and patterns of the turn's live configuration (the constructor's without items). */
  #setupOf(config: ConfigView | undefined): RouteSetup {
    if (!config || (config.items('task-type').size === 0 && config.items('pattern').size === 0))
      return this.#setup;
    let setup = this.#configured.get(config);
    if (!setup) {
      setup = configuredSetup(
        {
          givenTaskTypes: this.#givenTaskTypes,
          patterns: this.#patterns,
          defaultPattern: this.defaultPattern,
        },
        config,
        this.#instructions,
      );
      this.#configured.set(config, setup);
    }
    return setup;
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const setup = this.#setupOf(RequestContext.tryCurrent()?.config);
    const route =
      (conversation.hop > 0 ? await recallRoute(this.#memoryKey, conversation, setup) : undefined) ??
      (await this.#decide(conversation, setup));
    annotateStep(conversation, { pattern: route.pattern });
    const entry = setup.patterns.get(route.pattern)!;
    const framing = setup.taskTypes.find((type) => type.name === route.taskType)?.framing;
    return entry.orchestrator.decide({
      ...conversation,
      agents: conversation.agents.filter((agent) => entry.agentNames.has(agent.name)),
      ...withFraming(conversation, route.taskType, framing),
    });
  }

  /** Makes, records and remembers the turn's choice. */
  async #decide(conversation: Conversation, setup: RouteSetup): Promise<ChosenRoute> {
    const route = await makeChoice(this.#choosing, conversation, setup);
    recordRoute(conversation, route, {
      taskTypes: setup.taskTypes.map((type) => type.name),
      patterns: [...this.#typeOf(setup, route.taskType).patterns],
    });
    const memory = RequestContext.tryCurrent()?.getMemory('session');
    if (memory) {
      // One key per router, overwritten each turn: a session runs one turn at a time, so it never grows.
      const stored = { v: 1, turnId: conversation.turnId, taskType: route.taskType, pattern: route.pattern };
      const written = await memory.setContent(this.#memoryKey, stored);
      if (!written.success) trace.getActiveSpan()?.setAttribute('switchboard.meta.remembered', false);
    }
    return route;
  }

  #typeOf(setup: RouteSetup, name: string): TaskType {
    return (
      setup.taskTypes.find((type) => type.name === name) ?? {
        name,
        description: '',
        patterns: [this.defaultPattern],
      }
    );
  }
}
