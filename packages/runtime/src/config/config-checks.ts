import type { ConfigItemType, ConfigItemValues } from './config-items.js';

/** What the app knows that an item may name: its agents, and what its orchestrators call their patterns and step rules. */
export interface ConfigNames {
  agents: ReadonlySet<string>;
  /** The meta-routers' pattern names; undefined when the app has no meta-router. */
  patterns?: ReadonlySet<string>;
  /** The names of the step-rules wrappers; undefined when the app has none. */
  stepRules?: ReadonlySet<string>;
}

/**
 * True when `pattern` (an agent name, or a pattern where `*` stands for any
 * characters, such as `research_*`) matches the agent name `name`.
 */
export function matchesAgent(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(name);
}

/**
 * What is wrong with a valid item in this app: names of agents, patterns
 * or step-rules wrappers it does not have, two steps of one name, several
 * default steps. Empty when nothing is.
 */
export function itemProblems<Type extends ConfigItemType>(
  type: Type,
  name: string,
  value: ConfigItemValues[Type],
  known: ConfigNames,
): string[] {
  const problems: string[] = [];
  const agents = [...known.agents];
  const agent = (where: string, candidate: string) => {
    if (!known.agents.has(candidate))
      problems.push(`${where}: '${candidate}' is not an agent of this app (${agents.join(', ')})`);
  };
  const pattern = (where: string, candidate: string) => {
    if (known.patterns && !known.patterns.has(candidate))
      problems.push(`${where}: '${candidate}' is not a pattern (${[...known.patterns].join(', ')})`);
  };
  switch (type) {
    case 'keywords':
      agent('name', name);
      break;
    case 'pattern': {
      pattern('name', name);
      const item = value as ConfigItemValues['pattern'];
      for (const [index, each] of (item.agents ?? []).entries()) agent(`agents.${index}`, each);
      break;
    }
    case 'task-type': {
      const item = value as ConfigItemValues['task-type'];
      for (const [index, each] of item.patterns.entries()) pattern(`patterns.${index}`, each);
      break;
    }
    case 'step-rules': {
      if (known.stepRules && !known.stepRules.has(name))
        problems.push(`name: '${name}' is not a step-rules wrapper (${[...known.stepRules].join(', ')})`);
      const item = value as ConfigItemValues['step-rules'];
      const seen = new Set<string>();
      item.steps.forEach((step, index) => {
        const at = `steps.${index}`;
        if (seen.has(step.name)) problems.push(`${at}.name: two steps are named '${step.name}'`);
        seen.add(step.name);
        for (const [position, each] of (step.sequence ?? []).entries())
          agent(`${at}.sequence.${position}`, each);
        for (const list of ['allowed', 'denied'] as const) {
          step[list]?.forEach((entry, position) => {
            if (!agents.some((candidate) => matchesAgent(entry, candidate)))
              problems.push(`${at}.${list}.${position}: '${entry}' matches no agent of this app`);
          });
        }
        for (const [position, condition] of (step.conditions ?? []).entries()) {
          const where = `${at}.conditions.${position}`;
          if (condition.type === 'used') agent(`${where}.agent`, condition.agent);
          else for (const each of condition.sequence ?? []) agent(`${where}.sequence`, each);
        }
      });
      if (item.steps.filter((step) => step.isDefault).length > 1)
        problems.push('steps: only one step can be the default');
      break;
    }
    case 'profile':
      break;
  }
  return problems;
}
