import { trace } from '@opentelemetry/api';
import {
  AbstractOrchestrator,
  type AgentMeta,
  annotateStep,
  ConfigurationError,
  type ConfigView,
  type Conversation,
  currentUserMessage,
  type Decision,
  type Orchestrator,
  RequestContext,
  recordStep,
  recordUsage,
  type StepAnnotations,
} from '@switchboard/core';
import type { ChatClient, LlmClientOptions } from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import { z } from 'zod';
import { routerConversation } from './llm-route-prompt.js';
import { askForStructuredAnswer } from './llm-structured-output.js';
import type { MetaRouteSchema } from './meta-route-schema.js';
import {
  checkTaskTypes,
  configuredSetup,
  type MetaRouterPattern,
  type PatternEntry,
  patternEntries,
  type RouteSetup,
  routeSetup,
} from './meta-route-setup.js';
import { type ChosenRoute, GENERAL_TASK, type TaskType, withFraming } from './meta-route-view.js';

export type { MetaRouterPattern } from './meta-route-setup.js';

/** What a {@link MetaRouteChooser} is given. */
export interface MetaRouteInput {
  conversation: Conversation;
  /** The text of the turn's user message. */
  message: string;
  taskTypes: readonly TaskType[];
  /** The patterns by name, with the agents each may call. */
  patterns: readonly { name: string; whenToUse?: string; agents: readonly string[] }[];
}

/** A chooser's pick. `pattern` may be left out: the default pattern when the task type allows it, else its first. */
export interface MetaRouteChoice {
  taskType: string;
  pattern?: string;
  rationale?: string;
  confidence?: number;
}

/** Picks the task type and pattern without a model (rules, a classifier of your own). */
export type MetaRouteChooser = (input: MetaRouteInput) => MetaRouteChoice | Promise<MetaRouteChoice>;

/** Options of {@link MetaRouter}. */
export interface MetaRouterOptions extends LlmClientOptions {
  /** Default `meta`. */
  name?: string;
  description?: string;
  agents: readonly AgentMeta[];
  /** Without task types, every turn is the `general` task handled by the default pattern. */
  taskTypes?: readonly TaskType[];
  patterns: Readonly<Record<string, MetaRouterPattern>>;
  /** The pattern of the `general` task and of every fallback. Default: the first pattern. */
  defaultPattern?: string;
  /** Chooses with a function instead of a model. */
  choose?: MetaRouteChooser;
  /** The model that chooses (structured output), when there is no `choose`. */
  model?: string;
  /** Replaces the opening of the task-type prompt. */
  instructions?: string;
  /** How many recent messages the model sees (the current turn is always whole). Default 12. */
  historyWindow?: number;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}

const DEFAULT_INSTRUCTIONS = "Classify the user's request as one of the task types below.";

/** The choice a later hop of the same turn reads back, possibly on another replica. */
const StoredRouteSchema = z.object({
  v: z.literal(1),
  turnId: z.string(),
  taskType: z.string(),
  pattern: z.string(),
});

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
  readonly #choose?: MetaRouteChooser;
  readonly #client?: () => Promise<ChatClient>;
  readonly #historyWindow: number;
  readonly #maxRetries: number;
  readonly #temperature?: number;
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
    this.#choose = choose;
    this.#historyWindow = historyWindow;
    this.#maxRetries = maxRetries;
    this.#temperature = temperature;
    this.#memoryKey = `meta-router:${name}`;
    if (!choose && model) {
      this.model = model;
      this.#client = clientResolver(owner, { client, apiKey, baseURL });
      this.#instructions = instructions;
    }
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
      (conversation.hop > 0 ? await this.#recall(conversation, setup) : undefined) ??
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

  /** The choice made on the turn's first decision, read back from session memory. */
  async #recall(
    conversation: Conversation,
    setup: RouteSetup,
  ): Promise<{ taskType: string; pattern: string } | undefined> {
    const memory = RequestContext.tryCurrent()?.getMemory('session');
    const stored = memory ? await memory.getContent(this.#memoryKey) : undefined;
    const parsed = stored?.success ? StoredRouteSchema.safeParse(stored.data) : undefined;
    if (
      parsed?.success &&
      parsed.data.turnId === conversation.turnId &&
      setup.patterns.has(parsed.data.pattern)
    ) {
      return parsed.data;
    }
    // Lost (memory down, expired): choose again rather than fail the turn; the new choice is recorded.
    trace.getActiveSpan()?.setAttribute('switchboard.meta.recalled', false);
    return undefined;
  }

  /** Makes, records and remembers the turn's choice. */
  async #decide(conversation: Conversation, setup: RouteSetup): Promise<ChosenRoute> {
    const route = await this.#makeChoice(conversation, setup);
    const candidates = {
      taskTypes: setup.taskTypes.map((type) => type.name),
      patterns: [...this.#typeOf(setup, route.taskType).patterns],
    };
    const note: StepAnnotations = {
      pattern: route.pattern,
      taskType: route.taskType,
      choice: { taskType: route.taskType, pattern: route.pattern },
      candidates,
      chooser: route.chooser,
    };
    if (route.rationale) note.rationale = route.rationale;
    if (route.confidence !== undefined) note.confidence = route.confidence;
    if (route.fallback) note.fallback = true;
    if (route.problems?.length) note.problems = route.problems;
    recordStep(conversation, 'meta-route', note);
    trace.getActiveSpan()?.setAttributes({
      'switchboard.meta.task_type': route.taskType,
      'switchboard.meta.pattern': route.pattern,
      'switchboard.meta.candidates.task_types': candidates.taskTypes,
      'switchboard.meta.candidates.patterns': candidates.patterns,
      'switchboard.meta.chooser': route.chooser,
      'switchboard.meta.rationale': route.rationale,
      'switchboard.meta.confidence': route.confidence,
      'switchboard.meta.fallback': route.fallback,
      'switchboard.meta.problems': route.problems?.length ? route.problems : undefined,
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

  #fallback(problems: string[], chooser: ChosenRoute['chooser']): ChosenRoute {
    return { taskType: GENERAL_TASK, pattern: this.defaultPattern, chooser, fallback: true, problems };
  }

  /** The pattern of a type when none (or no valid one) was chosen. */
  #defaultOf(type: TaskType): string {
    return type.patterns.includes(this.defaultPattern) ? this.defaultPattern : type.patterns[0]!;
  }

  async #makeChoice(conversation: Conversation, setup: RouteSetup): Promise<ChosenRoute> {
    if (this.#choose) return this.#chooseWith(this.#choose, conversation, setup);
    const [only] = setup.taskTypes;
    if (setup.taskTypes.length === 1 && only && only.patterns.length === 1) {
      return { taskType: only.name, pattern: only.patterns[0]!, chooser: 'default' };
    }
    if (!this.#client)
      return this.#fallback(
        [
          'the configuration has several task types or patterns, and the router has no model or choose function',
        ],
        'default',
      );
    return this.#chooseWithModel(conversation, setup);
  }

  async #chooseWith(
    choose: MetaRouteChooser,
    conversation: Conversation,
    setup: RouteSetup,
  ): Promise<ChosenRoute> {
    let choice: MetaRouteChoice;
    try {
      choice = await choose({
        conversation,
        message: currentUserMessage(conversation).content,
        taskTypes: setup.taskTypes,
        patterns: [...setup.patterns.values()].map(({ name, whenToUse, agentNames }) => ({
          name,
          whenToUse,
          agents: [...agentNames],
        })),
      });
    } catch (error) {
      return this.#fallback(
        [`choose threw: ${error instanceof Error ? error.message : String(error)}`],
        'function',
      );
    }
    const type = setup.taskTypes.find((candidate) => candidate.name === choice?.taskType);
    if (!type)
      return this.#fallback(
        [`choose returned the unknown task type '${String(choice?.taskType)}'`],
        'function',
      );
    const route: ChosenRoute = { taskType: type.name, pattern: this.#defaultOf(type), chooser: 'function' };
    if (choice.pattern !== undefined && !type.patterns.includes(choice.pattern)) {
      route.fallback = true;
      route.problems = [
        `choose returned the pattern '${choice.pattern}', not valid for task type '${type.name}'`,
      ];
    } else if (choice.pattern !== undefined) route.pattern = choice.pattern;
    if (choice.rationale) route.rationale = choice.rationale;
    if (typeof choice.confidence === 'number') route.confidence = choice.confidence;
    return route;
  }

  async #chooseWithModel(conversation: Conversation, setup: RouteSetup): Promise<ChosenRoute> {
    // Outside the try: a missing `openai` package is a configuration error, not a case for the fallback.
    const client = await this.#client!();
    const history = routerConversation(conversation, this.#historyWindow);
    const ask = async (schema: MetaRouteSchema) => {
      const answer = await askForStructuredAnswer({
        client,
        model: this.model!,
        temperature: this.#temperature,
        messages: [{ role: 'system', content: schema.system }, ...history],
        responseFormat: schema.responseFormat,
        check: schema.check,
        maxRetries: this.#maxRetries,
      });
      recordUsage(conversation, answer.usage);
      return answer;
    };
    try {
      const typeAnswer = await ask(setup.taskSchema!);
      const type = setup.taskTypes.find((candidate) => candidate.name === typeAnswer.value?.choice);
      if (!type) return this.#fallback(typeAnswer.problems, 'model');
      const route: ChosenRoute = { taskType: type.name, pattern: type.patterns[0]!, chooser: 'model' };
      if (typeAnswer.value?.rationale) route.rationale = typeAnswer.value.rationale;
      if (typeAnswer.value?.confidence !== undefined) route.confidence = typeAnswer.value.confidence;
      const problems = [...typeAnswer.problems];
      const patternSchema = setup.patternSchemas.get(type.name);
      if (patternSchema) {
        const patternAnswer = await ask(patternSchema);
        problems.push(...patternAnswer.problems);
        if (patternAnswer.value) {
          route.pattern = patternAnswer.value.choice;
          if (patternAnswer.value.rationale) {
            route.rationale = [route.rationale, patternAnswer.value.rationale].filter(Boolean).join(' / ');
          }
        } else {
          route.pattern = this.#defaultOf(type);
          route.fallback = true;
        }
      }
      if (problems.length > 0) route.problems = problems;
      return route;
    } catch (error) {
      if (RequestContext.tryCurrent()?.signal.aborted) throw error;
      return this.#fallback(
        [`the model could not be reached: ${error instanceof Error ? error.message : String(error)}`],
        'model',
      );
    }
  }
}
