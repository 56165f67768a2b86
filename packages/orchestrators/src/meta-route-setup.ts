import { type AgentMeta, ConfigurationError, type ConfigView, type Orchestrator } from '@switchboard/core';
import type { PatternItem, TaskTypeItem } from '@switchboard/runtime';
import { type MetaRouteSchema, metaRouteSchema } from './meta-route-schema.js';
import { GENERAL_TASK, type TaskType } from './meta-route-view.js';

/** A pattern a `MetaRouter` may delegate to: an orchestrator, optionally with a text telling the model when it fits. */
export type MetaRouterPattern = Orchestrator | { orchestrator: Orchestrator; whenToUse?: string };

/** A pattern as the router runs it: the agents it may call known. */
export interface PatternEntry {
  name: string;
  orchestrator: Orchestrator;
  whenToUse?: string;
  agentNames: ReadonlySet<string>;
}

/**
 * What a meta-router chooses among, for one configuration: its task types
 * and patterns, and (with a model) the prompts and schemas of each choice,
 * built once per configuration.
 */
export interface RouteSetup {
  taskTypes: readonly TaskType[];
  patterns: ReadonlyMap<string, PatternEntry>;
  taskSchema?: MetaRouteSchema;
  patternSchemas: ReadonlyMap<string, MetaRouteSchema>;
}

/** The patterns checked: each an orchestrator whose agents the router has. */
export function patternEntries(
  owner: string,
  agents: readonly AgentMeta[],
  patterns: Readonly<Record<string, MetaRouterPattern>>,
): Map<string, PatternEntry> {
  const known = new Set(agents.map((agent) => agent.name));
  const entries = new Map<string, PatternEntry>();
  for (const [name, value] of Object.entries(patterns ?? {})) {
    const orchestrator = value && 'orchestrator' in value ? value.orchestrator : value;
    if (typeof orchestrator?.decide !== 'function' || !Array.isArray(orchestrator.agents)) {
      throw new ConfigurationError({
        message: `${owner}: pattern '${name}' must be an orchestrator or { orchestrator, whenToUse? }`,
      });
    }
    const unknown = orchestrator.agents.filter((agent) => !known.has(agent.name)).map((agent) => agent.name);
    if (unknown.length > 0) {
      throw new ConfigurationError({
        message: `${owner}: pattern '${name}' uses agents the meta-router does not have: ${unknown.join(', ')}. Its agents: ${[...known].join(', ') || '(none)'}`,
      });
    }
    const whenToUse = value && 'orchestrator' in value ? value.whenToUse : undefined;
    entries.set(name, {
      name,
      orchestrator,
      whenToUse,
      agentNames: new Set(orchestrator.agents.map((agent) => agent.name)),
    });
  }
  if (entries.size === 0) throw new ConfigurationError({ message: `${owner} needs at least one pattern` });
  return entries;
}

/** Throws a `ConfigurationError` for a task type without a name or patterns, or naming an unknown pattern. */
export function checkTaskTypes(
  owner: string,
  taskTypes: readonly TaskType[],
  patterns: ReadonlyMap<string, PatternEntry>,
): void {
  const seen = new Set<string>();
  for (const type of taskTypes) {
    if (typeof type?.name !== 'string' || type.name.trim() === '') {
      throw new ConfigurationError({ message: `${owner}: every task type needs a name` });
    }
    if (seen.has(type.name)) {
      throw new ConfigurationError({ message: `${owner}: two task types are named '${type.name}'` });
    }
    seen.add(type.name);
    if (!Array.isArray(type.patterns) || type.patterns.length === 0) {
      throw new ConfigurationError({
        message: `${owner}: task type '${type.name}' needs at least one pattern`,
      });
    }
    for (const pattern of type.patterns) {
      if (!patterns.has(pattern)) {
        throw new ConfigurationError({
          message: `${owner}: task type '${type.name}' names the unknown pattern '${pattern}'. Patterns: ${[...patterns.keys()].join(', ')}`,
        });
      }
    }
  }
}

/** The setup of these task types and patterns; with `instructions`, the model's prompts and schemas too. */
export function routeSetup(
  taskTypes: readonly TaskType[],
  patterns: ReadonlyMap<string, PatternEntry>,
  instructions: string | undefined,
): RouteSetup {
  const setup: RouteSetup = { taskTypes, patterns, patternSchemas: new Map() };
  if (instructions === undefined) return setup;
  setup.taskSchema = metaRouteSchema('task_type', instructions, taskTypes);
  const patternSchemas = new Map<string, MetaRouteSchema>();
  for (const type of taskTypes) {
    if (type.patterns.length < 2) continue;
    const options = type.patterns.map((pattern) => ({
      name: pattern,
      whenToUse: patterns.get(pattern)?.whenToUse,
    }));
    const framing = `The user's request is of the task type "${type.name}" (${type.description}). Choose the pattern that handles it best.`;
    patternSchemas.set(type.name, metaRouteSchema('pattern', framing, options));
  }
  setup.patternSchemas = patternSchemas;
  return setup;
}

/** A pattern with its `pattern` item applied; undefined when the item disables it. */
function configuredPattern(entry: PatternEntry, item: PatternItem | undefined): PatternEntry | undefined {
  if (!item) return entry;
  if (item.enabled === false) return undefined;
  const configured: PatternEntry = { ...entry };
  if (item.whenToUse !== undefined) configured.whenToUse = item.whenToUse;
  if (item.agents) {
    // Narrows only: an agent the pattern's orchestrator does not have is no candidate.
    const narrowed = item.agents.filter((agent) => entry.agentNames.has(agent));
    if (narrowed.length > 0) configured.agentNames = new Set(narrowed);
  }
  return configured;
}

/**
 * The task types and patterns of a configuration: `pattern` items narrow
 * or disable the router's patterns (never its default one); `task-type`
 * items replace, add or (`enabled: false`) remove task types, whose patterns
 * are kept to those still there. Without any task type left, the `general`
 * one.
 */
export function configuredSetup(
  owner: {
    givenTaskTypes: readonly TaskType[];
    patterns: ReadonlyMap<string, PatternEntry>;
    defaultPattern: string;
  },
  config: ConfigView,
  instructions: string | undefined,
): RouteSetup {
  const patternItems = config.items('pattern');
  const patterns = new Map<string, PatternEntry>();
  for (const [name, entry] of owner.patterns) {
    const item =
      name === owner.defaultPattern ? undefined : (patternItems.get(name) as PatternItem | undefined);
    const configured = configuredPattern(entry, item);
    if (configured) patterns.set(name, configured);
  }
  const defaultEntry = owner.patterns.get(owner.defaultPattern) as PatternEntry;
  const defaultItem = patternItems.get(owner.defaultPattern) as PatternItem | undefined;
  patterns.set(
    owner.defaultPattern,
    configuredPattern(defaultEntry, defaultItem && { ...defaultItem, enabled: true }) ?? defaultEntry,
  );

  const typeItems = config.items('task-type') as ReadonlyMap<string, TaskTypeItem>;
  const typed = new Map<string, TaskType>(owner.givenTaskTypes.map((type) => [type.name, type]));
  for (const name of [...typeItems.keys()].sort()) {
    const item = typeItems.get(name) as TaskTypeItem;
    if (item.enabled === false) {
      typed.delete(name);
      continue;
    }
    const { enabled: _enabled, ...fields } = item;
    typed.set(name, { name, ...fields });
  }
  const taskTypes: TaskType[] = [];
  for (const type of typed.values()) {
    const usable = type.patterns.filter((pattern) => patterns.has(pattern));
    if (usable.length > 0) taskTypes.push({ ...type, patterns: usable });
  }
  if (taskTypes.length === 0)
    taskTypes.push({ name: GENERAL_TASK, description: 'Any request', patterns: [owner.defaultPattern] });
  return routeSetup(Object.freeze(taskTypes), patterns, instructions);
}
