import type { Orchestrator } from '@switchboard/core';
import type { ConfigNames } from './config-checks.js';

/** What an orchestrator may show of itself for the config checks (a meta-router, a step-rules wrapper). */
interface Configurable {
  /** A meta-router's pattern names. */
  readonly patternNames?: readonly string[];
  /** A step-rules wrapper's steps (its `name` is then its item's name) and the orchestrator it wraps. */
  readonly stepNames?: readonly string[];
  readonly inner?: Orchestrator;
  /** A meta-router's patterns' orchestrators. */
  readonly patternOrchestrators?: readonly Orchestrator[];
}

/**
 * The names an app's items may use: its agents, and the patterns and
 * step-rules wrappers found in its orchestrator (through wrappers and a
 * meta-router's patterns).
 */
export function configNamesOf(agents: Iterable<string>, orchestrator: Orchestrator | undefined): ConfigNames {
  const names: ConfigNames = { agents: new Set(agents) };
  const patterns = new Set<string>();
  const stepRules = new Set<string>();
  const seen = new Set<Orchestrator>();
  const visit = (each: Orchestrator | undefined) => {
    if (!each || seen.has(each)) return;
    seen.add(each);
    const configurable = each as Orchestrator & Configurable;
    for (const name of configurable.patternNames ?? []) patterns.add(name);
    if (Array.isArray(configurable.stepNames)) stepRules.add(each.name);
    visit(configurable.inner);
    for (const pattern of configurable.patternOrchestrators ?? []) visit(pattern);
  };
  visit(orchestrator);
  if (patterns.size > 0) names.patterns = patterns;
  if (stepRules.size > 0) names.stepRules = stepRules;
  return names;
}
