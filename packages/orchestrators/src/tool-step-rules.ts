import {
  type AgentMeta,
  ConfigurationError,
  type Memory,
  StoreUnavailableError,
  type ToolMessage,
} from '@switchboard/core';
import type { AgentContext, LlmToolFilter, LlmToolResult } from '@switchboard/runtime';
import { type CompiledStep, compileSteps, matchesAgent, type StepRule } from './step-rules-config.js';
import {
  allowedAgents,
  applyReplies,
  chooseStep,
  FRESH_STATE,
  parseStepState,
  type StoredStepState,
} from './step-rules-state.js';

/** Options of {@link toolStepRules}. */
export interface ToolStepRulesOptions {
  /** The steps, as for `withSteps`, naming tools where `withSteps` names agents. */
  steps: readonly StepRule[];
  /** Default: the agent's name. The session-memory key is `tool-steps:<name>`. */
  name?: string;
  /** How many of the session's latest successful tool calls `used` and `sequence_match` look at. Default 10. */
  recentWindow?: number;
}

/** Every name the steps mention (patterns included, which match themselves), to compile them before the tools are known. */
function mentionedNames(steps: unknown): string[] {
  const names = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === 'string') names.add(value);
    else if (Array.isArray(value)) for (const entry of value) add(entry);
  };
  for (const step of Array.isArray(steps) ? steps : []) {
    if (typeof step !== 'object' || step === null) continue;
    const { sequence, allowed, denied, availableTools, conditions } = step as Record<string, unknown>;
    add([sequence, allowed, denied]);
    if (typeof availableTools === 'object' && availableTools !== null) {
      const lists = availableTools as Record<string, unknown>;
      add([lists.allowed, lists.denied]);
    }
    for (const condition of Array.isArray(conditions) ? conditions : []) {
      if (typeof condition !== 'object' || condition === null) continue;
      const { agent, value, sequence: matched } = condition as Record<string, unknown>;
      add([agent, value, matched]);
    }
  }
  return [...names];
}

/** Checks that every name of the steps is one of the agent's tools, and every pattern matches one. */
function checkToolNames(owner: string, steps: readonly CompiledStep[], tools: readonly string[]): void {
  const known = tools.join(', ') || '(none)';
  const check = (step: string, where: string, entry: string) => {
    const found = entry.includes('*')
      ? tools.some((tool) => matchesAgent(entry, tool))
      : tools.includes(entry);
    if (!found) {
      throw new ConfigurationError({
        message: `${owner}: step '${step}' names '${entry}' in ${where}, which ${entry.includes('*') ? 'matches none of' : 'is not one of'} the agent's tools: ${known}`,
      });
    }
  };
  for (const step of steps) {
    for (const name of step.sequence) check(step.name, 'its sequence', name);
    for (const entry of step.allowed) check(step.name, 'allowed', entry);
    for (const entry of step.denied) check(step.name, 'denied', entry);
    for (const condition of step.conditions) {
      if (condition.kind === 'used') check(step.name, 'a used condition', condition.agent);
      if (condition.kind === 'sequence') {
        for (const name of condition.sequence) check(step.name, 'a sequence_match condition', name);
      }
    }
  }
}

/** The tool results as the replies the step state counts: a failed or refused call counts for nothing. */
function asReplies(results: readonly LlmToolResult[]): ToolMessage[] {
  const createdAt = new Date().toISOString();
  return results.map((result) => ({
    id: result.toolCallId,
    role: 'tool',
    name: result.name,
    toolCallId: result.toolCallId,
    content: result.content,
    status: result.ok ? 'ok' : 'error',
    createdAt,
  }));
}

/** The session memory, if the request has one (a hand-built context may not). */
function sessionMemory(agent: AgentContext): Memory | undefined {
  try {
    return agent.request.getMemory('session');
  } catch {
    return undefined;
  }
}

/**
 * Step rules for the tools of one `llmAgent`, as its `toolFilter`: the
 * rules of `withSteps`, with tool names where `withSteps` has agent names.
 * Before each model call, the tool calls answered since the previous one
 * are counted (a successful one joins the session's recent tools and
 * advances the active step's sequence), the active step is chosen (the
 * first whose conditions hold, else the one already active, else the
 * default), and the model is offered what it allows: while its `sequence`
 * runs, only the sequence's next tool; then the tools `allowed` lists (all
 * when none) except those `denied` lists. A call to any other tool is
 * refused as a tool error the model sees, and never runs.
 *
 * The state (active step, recent tools, sequence position) lives in session
 * memory under `tool-steps:<name>`, so a sequence started in one turn goes
 * on in the next, on any replica. When it can be neither read nor written
 * the agent call fails rather than offer tools unchecked. Without session
 * memory every agent call starts from a new session.
 *
 * The step syntax is checked here; the tool names when the agent first
 * calls, against its tools (a `ConfigurationError` fails that call).
 *
 * @example
 * ```ts
 * const shop = llmAgent({
 *   name: 'shop',
 *   description: 'Takes orders',
 *   model: 'gpt-4o-mini',
 *   instructions: 'Help the user order.',
 *   tools: [search, addToCart, address, pay],
 *   toolFilter: toolStepRules({
 *     steps: [
 *       { name: 'browse', description: 'Looking around', isDefault: true, denied: ['pay'] },
 *       {
 *         name: 'checkout',
 *         description: 'Address, then payment',
 *         conditions: [{ type: 'used', agent: 'addToCart' }],
 *         sequence: ['address', 'pay'],
 *       },
 *     ],
 *   }),
 * });
 * ```
 */
export function toolStepRules({ steps, name, recentWindow = 10 }: ToolStepRulesOptions): LlmToolFilter {
  const owner = `toolStepRules${name === undefined ? '' : ` '${name}'`}`;
  if (!Number.isInteger(recentWindow) || recentWindow < 1) {
    throw new ConfigurationError({ message: `${owner}: recentWindow must be a positive integer` });
  }
  // The tools are not known before the agent calls: the names are checked against them then.
  const compiled = compileSteps(owner, steps, mentionedNames(steps), recentWindow);
  const checkedToolLists = new Set<string>();

  return async (tools, { agent, agentName, results }) => {
    const toolList = tools.join('\n');
    if (!checkedToolLists.has(toolList)) {
      checkToolNames(`${owner} of '${agentName}'`, compiled, tools);
      checkedToolLists.add(toolList);
    }
    const memory = sessionMemory(agent);
    const memoryKey = `tool-steps:${name ?? agentName}`;
    const loaded = await load(memory, memoryKey);
    const before = loaded ?? FRESH_STATE;
    const previous = compiled.find((step) => step.name === before.activeStep);
    const counted = applyReplies(before, asReplies(results), previous, recentWindow);
    const { step, state } = chooseStep(compiled, counted, agent.conversation, {
      newSession: loaded === undefined,
    });
    const candidates: AgentMeta[] = tools.map((tool) => ({ name: tool, description: '' }));
    const allowed = allowedAgents(step, state.sequenceIndex, candidates).map((tool) => tool.name);
    if (memory && (loaded === undefined || JSON.stringify(state) !== JSON.stringify(loaded))) {
      const written = await memory.setContent(memoryKey, state);
      if (!written.success) throw unavailable(memoryKey, 'write', written.error);
    }
    return allowed;
  };
}

/** The session's stored state; `undefined` for a new session (or without session memory). */
async function load(memory: Memory | undefined, key: string): Promise<StoredStepState | undefined> {
  if (!memory) return undefined;
  const stored = await memory.getContent(key);
  if (!stored.success) throw unavailable(key, 'read', stored.error);
  return parseStepState(stored.data);
}

function unavailable(key: string, operation: 'read' | 'write', cause: Error): StoreUnavailableError {
  return new StoreUnavailableError({
    message: `Tool step rules could not ${operation} the session's step state ('${key}')`,
    cause,
  });
}
