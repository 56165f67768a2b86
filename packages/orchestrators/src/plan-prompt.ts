import type { AgentMeta } from '@switchboard/core';
import type { PlanStepState } from './plan-state.js';
import { MISSING_MARKER } from './supervisor-prompt.js';

/** The planner's role, used when no `instructions` are given. */
export const DEFAULT_PLANNER_INSTRUCTIONS =
  "You are the planner of a team of agents. You break the user's request into steps, each done by one agent; a step may need the results of earlier steps.";

function agentList(agents: readonly AgentMeta[]): string {
  return agents
    .map((agent) => `- ${agent.name}: ${agent.description.replace(/\s+/g, ' ').trim()}`)
    .join('\n');
}

const PLAN_RULES = `Rules:
- Each step has a short unique id, a goal written so that its agent can act on it without the conversation, one agent, and dependsOn: the ids of the steps whose results it needs (none when it can start at once). Steps without a dependency between them run at the same time.
- Only the agents listed above exist; dependencies must not form a loop.`;

/**
 * The system prompt of the first plan.
 * @example
 * ```ts
 * const system = planPrompt(DEFAULT_PLANNER_INSTRUCTIONS, conversation.agents);
 * ```
 */
export function planPrompt(instructions: string, agents: readonly AgentMeta[]): string {
  return `${instructions}

Agents:
${agentList(agents)}

${PLAN_RULES}
- When the request is simple, needs no agent, or is unclear, give no steps and write the answer (or a short clarifying question) in "answer".

Answer with a JSON object with the fields thought, steps and answer.`;
}

/**
 * The system prompt of a re-plan, after a step failed.
 * @example
 * ```ts
 * const system = replanPrompt(DEFAULT_PLANNER_INSTRUCTIONS, conversation.agents);
 * ```
 */
export function replanPrompt(instructions: string, agents: readonly AgentMeta[]): string {
  return `${instructions}

A step of your plan failed. Write a new plan for the remaining work only: the steps that are done stay done, and new steps may depend on them by id. Do not reuse the id of an earlier step. Give another way to reach the failed goal (another agent, another approach), or no steps when nothing more can be done.

Agents:
${agentList(agents)}

${PLAN_RULES}

Answer with a JSON object with the fields thought, steps and answer.`;
}

/**
 * The system prompt of a review after a round whose steps all succeeded.
 * @example
 * ```ts
 * const system = reviewPrompt(DEFAULT_PLANNER_INSTRUCTIONS, conversation.agents);
 * ```
 */
export function reviewPrompt(instructions: string, agents: readonly AgentMeta[]): string {
  return `${instructions}

Some steps of your plan are done. Read their results: when the remaining steps still fit, answer with "revise": false and no steps. When a result changes the picture (the remaining steps are no longer needed, no longer enough, or need another agent), answer with "revise": true and the steps that replace every remaining step; they may depend on done steps by id, must not reuse the id of an earlier step, and may be none when nothing more is needed.

Agents:
${agentList(agents)}

${PLAN_RULES}

Answer with a JSON object with the fields thought, revise, steps and answer (empty).`;
}

/**
 * The system prompt of the synthesis.
 * @example
 * ```ts
 * const system = planSynthesisPrompt();
 * ```
 */
export function planSynthesisPrompt(): string {
  return `You are the planner of a team of agents. The agents have carried out the steps of your plan for the user's request; write the answer the user reads from their results.

Rules:
- Use only the results below; never add facts no agent gave.
- A step marked ${MISSING_MARKER} failed: say plainly in the answer what could not be done, never invent it.

Answer with a JSON object with the fields thought and answer.`;
}

/**
 * The steps with their statuses and results, as the model reads them (a
 * failed step is marked {@link MISSING_MARKER} with its safe description).
 * @example
 * ```ts
 * const block = renderPlan(state.steps);
 * ```
 */
export function renderPlan(steps: readonly PlanStepState[]): string {
  return steps
    .map((step) => {
      const head = `[Step "${step.id}" (${step.agent}): ${step.goal}${step.dependsOn.length ? `; after ${step.dependsOn.join(', ')}` : ''}]`;
      if (step.status === 'done') return `${head} done:\n${step.result ?? ''}`;
      if (step.status === 'failed') return `${head} ${MISSING_MARKER}: failed (${step.result ?? 'no reply'})`;
      return `${head} ${step.status}`;
    })
    .join('\n\n');
}

/**
 * The message a step's agent receives: its goal, then the results of the
 * steps it depends on.
 * @example
 * ```ts
 * const task = stepTask(step, state.steps);
 * ```
 */
export function stepTask(step: PlanStepState, steps: readonly PlanStepState[]): string {
  const inputs = step.dependsOn
    .map((id) => steps.find((candidate) => candidate.id === id))
    .filter((dependency) => dependency !== undefined)
    .map((dependency) => `[Result of "${dependency.id}": ${dependency.goal}]\n${dependency.result ?? ''}`);
  return inputs.length > 0
    ? `${step.goal}\n\nResults of earlier steps:\n\n${inputs.join('\n\n')}`
    : step.goal;
}
