import { ConfigurationError, type Conversation } from '@switchboard/core';
import { matchesAgent } from '@switchboard/runtime/internal';
import { z } from 'zod';

/**
 * What step rules know of a session when they evaluate a condition: the
 * step that was active, the agents that replied successfully of late
 * (oldest first, repeats kept) and how far the active step's sequence got.
 */
export interface StepRuleState {
  readonly activeStep?: string;
  /** The last `recentWindow` successful calls, by agent name, oldest first. */
  readonly recentlyUsed: readonly string[];
  /** How many agents of the active step's `sequence` have been called, in order. */
  readonly sequenceIndex: number;
}

/**
 * A condition written as code. Called on every decision, possibly more than
 * once: keep it synchronous, quick and free of side effects.
 */
export type StepPredicate = (state: StepRuleState, conversation: Conversation) => boolean;

/**
 * When a step becomes active. A step's conditions must all hold.
 * - `used`: `agent` is among the recent calls (`tool_used` with `value` is
 *   AgentDock's spelling of it);
 * - `sequence_match`: the recent calls end with `sequence` (without one:
 *   with the step's own `sequence`, as in AgentDock);
 * - `predicate`: `test` returns true; `description` names it in the step's reason.
 */
export type StepCondition =
  | { readonly type: 'used'; readonly agent: string; readonly description?: string }
  | { readonly type: 'tool_used'; readonly value: string; readonly description?: string }
  | {
      readonly type: 'sequence_match';
      readonly sequence?: readonly string[];
      /** Accepted for AgentDock configurations, which may carry it; unused. */
      readonly value?: string;
      readonly description?: string;
    }
  | { readonly type: 'predicate'; readonly test: StepPredicate; readonly description?: string };

/**
 * One step of {@link withSteps}. Agent lists (`allowed`, `denied`) take
 * agent names or patterns where `*` stands for any characters
 * (`research_*`); an empty list restricts nothing. `availableTools` is
 * AgentDock's spelling of `allowed` / `denied` (give one or the other).
 */
export interface StepRule {
  name: string;
  description: string;
  /** The step of a new session, and of a session whose step is no longer configured. At most one. */
  isDefault?: boolean;
  /** Makes the step active when they all hold (see {@link StepCondition}). */
  conditions?: readonly StepCondition[];
  /** Agents that must be called in this order: while it runs, only its next agent may be called. */
  sequence?: readonly string[];
  /** Once any sequence is done: the agents that may be called (default: all). */
  allowed?: readonly string[];
  /** Once any sequence is done: agents that may not be called, even when `allowed` lists them. */
  denied?: readonly string[];
  /** AgentDock's spelling of `allowed` and `denied`. */
  availableTools?: { readonly allowed?: readonly string[]; readonly denied?: readonly string[] };
}

/** A step as the rules run it: one spelling, names checked, the default known. */
export interface CompiledStep {
  readonly name: string;
  readonly description: string;
  readonly isDefault: boolean;
  readonly conditions: readonly CompiledCondition[];
  readonly sequence: readonly string[];
  readonly allowed: readonly string[];
  readonly denied: readonly string[];
}

/** A condition with the text that names it in a step's reason. */
export type CompiledCondition =
  | { readonly kind: 'used'; readonly agent: string; readonly label: string }
  | { readonly kind: 'sequence'; readonly sequence: readonly string[]; readonly label: string }
  | { readonly kind: 'predicate'; readonly test: StepPredicate; readonly label: string };

const nameList = z.array(z.string().min(1));
const description = z.string().optional();

// Strict objects: a misspelt key (`alowed`) would otherwise lift a restriction without a word.
const ConditionSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('used'), agent: z.string().min(1), description }),
  z.strictObject({ type: z.literal('tool_used'), value: z.string().min(1), description }),
  z.strictObject({
    type: z.literal('sequence_match'),
    sequence: nameList.min(1).optional(),
    value: z.string().optional(),
    description,
  }),
  z.strictObject({
    type: z.literal('predicate'),
    test: z.custom<StepPredicate>((value) => typeof value === 'function', 'must be a function'),
    description,
  }),
]);

const StepSchema = z.strictObject({
  name: z.string().trim().min(1),
  description: z.string(),
  isDefault: z.boolean().optional(),
  conditions: z.array(ConditionSchema).optional(),
  sequence: nameList.optional(),
  allowed: nameList.optional(),
  denied: nameList.optional(),
  availableTools: z.strictObject({ allowed: nameList.optional(), denied: nameList.optional() }).optional(),
});

const StepsSchema = z.array(StepSchema).min(1, 'at least one step is needed');

type ParsedStep = z.infer<typeof StepSchema>;
type ParsedCondition = z.infer<typeof ConditionSchema>;

/** True when `pattern` (a name, or a pattern with `*`) matches `name`; the runtime's check of config items uses it too. */
export { matchesAgent };

/**
 * Parses and checks step rules against the agents they govern: every name
 * in a sequence or a condition must be an agent, every entry of an agent
 * list must be an agent or a pattern matching one, step names are unique,
 * at most one step is the default, and `recentWindow` can hold the longest
 * `sequence_match`. Throws a `ConfigurationError` naming what is wrong.
 */
export function compileSteps(
  owner: string,
  steps: unknown,
  agentNames: readonly string[],
  recentWindow: number,
): CompiledStep[] {
  const parsed = StepsSchema.safeParse(steps);
  if (!parsed.success) {
    const detail = parsed.error.issues.map(
      (issue) => `${['steps', ...issue.path].join('.')}: ${issue.message}`,
    );
    throw new ConfigurationError({ message: `${owner}: invalid steps: ${detail.join('; ')}` });
  }
  const known = agentNames.join(', ') || '(none)';
  const checkAgent = (step: string, where: string, name: string) => {
    if (!agentNames.includes(name)) {
      throw new ConfigurationError({
        message: `${owner}: step '${step}' names the unknown agent '${name}' in ${where}; agents: ${known}`,
      });
    }
  };
  const checkList = (step: string, where: string, list: readonly string[]) => {
    for (const entry of list) {
      if (!entry.includes('*')) checkAgent(step, where, entry);
      else if (!agentNames.some((name) => matchesAgent(entry, name))) {
        throw new ConfigurationError({
          message: `${owner}: step '${step}' has the pattern '${entry}' in ${where}, which matches no agent; agents: ${known}`,
        });
      }
    }
  };

  const seen = new Set<string>();
  const compiled = parsed.data.map((step) => {
    if (seen.has(step.name)) {
      throw new ConfigurationError({ message: `${owner}: two steps are named '${step.name}'` });
    }
    seen.add(step.name);
    const compiledStep = compileStep(owner, step);
    for (const name of compiledStep.sequence) checkAgent(step.name, 'its sequence', name);
    checkList(step.name, 'allowed', compiledStep.allowed);
    checkList(step.name, 'denied', compiledStep.denied);
    for (const condition of compiledStep.conditions) {
      if (condition.kind === 'used') checkAgent(step.name, 'a used condition', condition.agent);
      if (condition.kind !== 'sequence') continue;
      for (const name of condition.sequence) checkAgent(step.name, 'a sequence_match condition', name);
      if (condition.sequence.length > recentWindow) {
        throw new ConfigurationError({
          message: `${owner}: step '${step.name}' matches a sequence of ${condition.sequence.length} calls, more than recentWindow (${recentWindow}) keeps`,
        });
      }
    }
    return compiledStep;
  });
  const defaults = compiled.filter((step) => step.isDefault).map((step) => step.name);
  if (defaults.length > 1) {
    throw new ConfigurationError({
      message: `${owner}: only one step can be the default; ${defaults.join(', ')} all are`,
    });
  }
  return compiled;
}

function compileStep(owner: string, step: ParsedStep): CompiledStep {
  const { availableTools } = step;
  if (availableTools && (step.allowed || step.denied)) {
    throw new ConfigurationError({
      message: `${owner}: step '${step.name}' gives both allowed/denied and availableTools; give one or the other`,
    });
  }
  const sequence = step.sequence ?? [];
  return {
    name: step.name,
    description: step.description,
    isDefault: step.isDefault === true,
    sequence,
    allowed: availableTools?.allowed ?? step.allowed ?? [],
    denied: availableTools?.denied ?? step.denied ?? [],
    conditions: (step.conditions ?? []).map((condition) =>
      compileCondition(owner, step.name, sequence, condition),
    ),
  };
}

function compileCondition(
  owner: string,
  step: string,
  sequence: readonly string[],
  condition: ParsedCondition,
): CompiledCondition {
  if (condition.type === 'predicate') {
    return { kind: 'predicate', test: condition.test, label: condition.description ?? 'a predicate' };
  }
  if (condition.type === 'sequence_match') {
    const matched = condition.sequence ?? sequence;
    if (matched.length === 0) {
      throw new ConfigurationError({
        message: `${owner}: step '${step}' has a sequence_match condition without a sequence, and no sequence of its own`,
      });
    }
    return {
      kind: 'sequence',
      sequence: matched,
      label: condition.description ?? `recent calls end with ${matched.join(' → ')}`,
    };
  }
  const agent = condition.type === 'used' ? condition.agent : condition.value;
  return { kind: 'used', agent, label: condition.description ?? `used ${agent}` };
}
