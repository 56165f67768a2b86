import {
  AbstractOrchestrator,
  annotateStep,
  ConfigurationError,
  type Conversation,
  createId,
  currentUserMessage,
  type Decision,
  latestToolResults,
  recordStep,
  routeToUser,
  type ToolCall,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { clientResolver } from '@switchboard/runtime/internal';
import { checkWholeNumbers } from './llm-structured-output.js';
import type { PlanExecuteOrchestratorOptions } from './plan-execute-options.js';
import { recallPlan, rememberPlan } from './plan-memory.js';
import { askForPlan, askForReplan, askForReview, askForSynthesis, type PlanModel } from './plan-model.js';
import { DEFAULT_PLANNER_INSTRUCTIONS, stepTask } from './plan-prompt.js';
import {
  applyResults,
  describeSteps,
  dropUnfinished,
  type PlanStepState,
  planView,
  readySteps,
  type StoredPlan,
  withSteps,
} from './plan-state.js';

export type { PlanExecuteOrchestratorOptions } from './plan-execute-options.js';

const FALLBACK_CALL = 'plan-fallback-';

/**
 * Has a model write a plan (steps with a goal, an agent and the steps they
 * depend on), runs it round by round (every step whose dependencies are done
 * at once, one fan-out), re-plans when a step fails, and has the model write
 * the answer from the steps' results.
 *
 * - Hop 0: the plan is strict JSON; a plan naming an unknown agent, an
 *   unknown dependency or a dependency cycle is sent back once with the
 *   reason (`maxRetries`), then the whole request goes to the first agent
 *   and its reply to the user (a plain route). With no step (a simple or
 *   unclear request) the model's own answer goes to the user. The plan is
 *   recorded as a `plan` note step.
 * - Each step's agent receives its goal and its dependencies' results. The
 *   call of a round is annotated with `planSteps` (the step ids) and `round`.
 * - A failed step leads to a new plan for the remaining work (a `replan` note
 *   step), at most `maxReplans` times per turn; then the answer is written
 *   from what is known and says what failed.
 * - After a round whose steps all succeeded, while steps remain, the model
 *   reviews the results (`reviewResults`, a `review` note step) and may
 *   replace the remaining steps when a result changed the picture (a
 *   `replan` note step with `reviewed: true`, counted against `maxReplans`).
 * - Each round's step and the answer's step carry the whole plan with every
 *   step's status in their `plan` annotation, so `GET /v1/sessions/:id`
 *   shows it from the stored turn on any replica.
 * - The plan, with each step's status (`pending`, `running`, `done`,
 *   `failed`) and result, is kept in session memory under
 *   `plan-execute:<name>:<turnId>`, so a turn continues on any replica and the
 *   plan stays visible in the session. When it cannot be read back, the
 *   latest replies go to the user as they are.
 *
 * Every model call's tokens are counted in the step's usage; the answer
 * streams to the client as the model writes it (`streamAnswer`).
 *
 * @example
 * ```ts
 * const planner = new PlanExecuteOrchestrator({
 *   agents: app.agentMetas,
 *   model: 'gpt-4o-mini',
 *   apiKey: process.env.OPENAI_API_KEY,
 * });
 * ```
 */
export class PlanExecuteOrchestrator extends AbstractOrchestrator {
  readonly model: string;
  readonly maxReplans: number;
  readonly reviewResults: boolean;
  /** The planning model and how it is asked. */
  readonly #planModel: PlanModel;

  constructor({
    name = 'plan-execute',
    description,
    agents,
    model,
    client,
    apiKey,
    baseURL,
    maxReplans = 2,
    reviewResults = true,
    instructions = DEFAULT_PLANNER_INSTRUCTIONS,
    historyWindow = 12,
    maxRetries = 1,
    temperature,
  }: PlanExecuteOrchestratorOptions) {
    super({ name, description, agents });
    const owner = `PlanExecuteOrchestrator '${name}'`;
    if (typeof model !== 'string' || model === '')
      throw new ConfigurationError({ message: `${owner} needs a model name` });
    checkWholeNumbers(owner, [
      ['maxReplans', maxReplans, 0],
      ['historyWindow', historyWindow, 1],
      ['maxRetries', maxRetries, 0],
    ]);
    this.model = model;
    this.maxReplans = maxReplans;
    this.reviewResults = reviewResults;
    this.#planModel = {
      client: clientResolver(owner, { client, apiKey, baseURL }),
      model,
      instructions,
      historyWindow,
      maxRetries,
      temperature,
    };
  }

  /** The re-plan bound of a turn: its strategy profile's `maxReplans` when it has one, else `maxReplans`. */
  maxReplansFor(conversation: Conversation): number {
    return conversation.limits?.maxReplans ?? this.maxReplans;
  }

  /** The session-memory key of a turn's plan. */
  memoryKey(turnId: string): string {
    return `plan-execute:${this.name}:${turnId}`;
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const results = latestToolResults(conversation);
    if (results.length === 0) return this.#plan(conversation);
    const stored = await recallPlan(this, conversation);
    if (!stored) {
      annotateStep(conversation, { planRecalled: false });
      return routeToUser(this.repliesAnswer(results), {
        reason: results.some((result) => result.toolCallId.startsWith(FALLBACK_CALL))
          ? 'fallback: the reply of the agent the whole request went to'
          : 'the plan could not be read back; the replies as they are',
      });
    }
    const state = applyResults(stored, results);
    const failed = state.steps.filter(
      (step) => step.status === 'failed' && results.some((result) => result.toolCallId === step.callId),
    );
    if (failed.length > 0) {
      if (state.replans < this.maxReplansFor(conversation)) return this.#replan(conversation, state, failed);
      return this.#synthesise(conversation, state, { replanLimit: true });
    }
    const remaining = state.steps.some((step) => step.status === 'pending');
    if (remaining && this.reviewResults && state.replans < this.maxReplansFor(conversation))
      return this.#review(conversation, state);
    if (readySteps(state).length > 0) return this.#fanOut(conversation, state);
    return this.#synthesise(conversation, state);
  }

  async #plan(conversation: Conversation): Promise<Decision> {
    const names = conversation.agents.map((agent) => agent.name);
    if (names.length === 0) return routeToUser(this.noPlanAnswer(), { reason: 'no agent to plan with' });
    const asked = await askForPlan(this.#planModel, conversation, names);
    if (!asked.ok) {
      recordStep(conversation, 'plan', { steps: [], fallback: true, problem: asked.problem });
      annotateStep(conversation, { fallback: true });
      return [
        toolCall(names[0]!, currentUserMessage(conversation).content, {
          id: `${FALLBACK_CALL}${createId('call')}`,
          reason: 'fallback: the model gave no valid plan',
          thought: asked.problem,
        }),
      ];
    }
    const { steps, answer, thought } = asked.value;
    if (steps.length === 0) return routeToUser(answer, { thought, reason: 'answered without a plan' });
    recordStep(conversation, 'plan', { steps: describeSteps(steps) });
    const state: StoredPlan = { v: 1, turnId: conversation.turnId, replans: 0, rounds: 0, steps: [] };
    return this.#fanOut(conversation, withSteps(state, steps, 1), thought);
  }

  async #replan(conversation: Conversation, state: StoredPlan, failed: PlanStepState[]): Promise<Decision> {
    const asked = await askForReplan(this.#planModel, conversation, state);
    const replan = state.replans + 1;
    const failedIds = failed.map((step) => step.id);
    if (!asked.ok || asked.value.steps.length === 0) {
      recordStep(conversation, 'replan', {
        replan,
        failed: failedIds,
        steps: [],
        ...(asked.ok ? {} : { problem: asked.problem }),
      });
      return this.#synthesise(conversation, { ...state, replans: replan });
    }
    recordStep(conversation, 'replan', {
      replan,
      failed: failedIds,
      steps: describeSteps(asked.value.steps),
    });
    const next = withSteps({ ...dropUnfinished(state), replans: replan }, asked.value.steps, replan + 1);
    return this.#fanOut(conversation, next, asked.value.thought);
  }

  /** After a round that went well: the model keeps the remaining steps, or replaces them because a result changed the picture. */
  async #review(conversation: Conversation, state: StoredPlan): Promise<Decision> {
    const asked = await askForReview(this.#planModel, conversation, state);
    if (!asked.ok || !asked.value.revise) {
      // A review that fails to answer keeps the plan: it is a check, not a step the work depends on.
      recordStep(conversation, 'review', { revise: false, ...(asked.ok ? {} : { problem: asked.problem }) });
      return this.#fanOut(conversation, state, asked.ok ? asked.value.thought : undefined);
    }
    const replan = state.replans + 1;
    const { steps, thought } = asked.value;
    recordStep(conversation, 'replan', { replan, reviewed: true, steps: describeSteps(steps) });
    const kept = { ...dropUnfinished(state), replans: replan };
    if (steps.length === 0) return this.#synthesise(conversation, kept);
    return this.#fanOut(conversation, withSteps(kept, steps, replan + 1), thought);
  }

  async #fanOut(conversation: Conversation, state: StoredPlan, thought?: string): Promise<Decision> {
    const ready = new Set(readySteps(state).map((step) => step.id));
    if (ready.size === 0) return this.#synthesise(conversation, state);
    const round = state.rounds + 1;
    const reason = `round ${round}: step${ready.size > 1 ? 's' : ''} ${[...ready].join(', ')}`;
    const steps = state.steps.map((step) =>
      ready.has(step.id) ? { ...step, status: 'running' as const, callId: `${step.id}-${step.plan}` } : step,
    );
    const calls: ToolCall[] = steps
      .filter((step) => ready.has(step.id))
      .map((step) => toolCall(step.agent, stepTask(step, steps), { id: step.callId, reason, thought }));
    annotateStep(conversation, { planSteps: [...ready], round, plan: planView(steps) });
    await rememberPlan(this, { ...state, rounds: round, steps });
    return calls;
  }

  async #synthesise(
    conversation: Conversation,
    state: StoredPlan,
    { replanLimit = false }: { replanLimit?: boolean } = {},
  ): Promise<Decision> {
    const failed = state.steps.filter((step) => step.status === 'failed').map((step) => step.id);
    const recorded = {
      replans: state.replans,
      failed,
      plan: planView(state.steps),
      ...(replanLimit ? { replanLimit: true } : {}),
    };
    await rememberPlan(this, state);
    const asked = await askForSynthesis(this.#planModel, conversation, state);
    const note = replanLimit ? `\n\n${this.replanLimitNote(state)}` : '';
    if (!asked.ok) {
      annotateStep(conversation, { ...recorded, synthesis: 'fallback' });
      return routeToUser(`${this.stepsAnswer(state.steps)}${note}`, {
        reason: 'the model gave no valid synthesis; the steps’ results as they are',
        thought: asked.problem,
      });
    }
    annotateStep(conversation, { ...recorded, synthesis: 'model' });
    return routeToUser(`${asked.value.answer}${note}`, {
      thought: asked.value.thought,
      reason: replanLimit
        ? `stopped at the limit of ${state.replans} re-plan${state.replans === 1 ? '' : 's'}`
        : 'synthesised from the plan’s results',
    });
  }

  /** What the user reads when there is no agent to plan with. Override to change the wording. */
  protected noPlanAnswer(): string {
    return 'Sorry, I could not work out a plan for this request.';
  }

  /** The latest replies as they are (the fallback route's reply, or a plan that was lost). Override to change the wording. */
  protected repliesAnswer(results: readonly ToolMessage[]): string {
    const answered = results.filter((result) => result.status === 'ok' && result.content.trim() !== '');
    if (answered.length === 0)
      return 'Sorry, I could not get an answer to this right now. Please try again in a moment.';
    if (answered.length === 1) return answered[0]!.content.trim();
    return answered.map((result) => `${result.name}: ${result.content.trim()}`).join('\n\n');
  }

  /** The steps' results when the model gives no valid synthesis. Override to change the wording. */
  protected stepsAnswer(steps: readonly PlanStepState[]): string {
    const done = steps.filter((step) => step.status === 'done');
    const failed = steps.filter((step) => step.status === 'failed');
    const parts = done.map((step) => `${step.goal}: ${step.result ?? ''}`);
    if (failed.length > 0) parts.push(`Could not be done: ${failed.map((step) => step.goal).join('; ')}.`);
    return parts.join('\n\n') || 'Sorry, none of the steps of my plan could be done right now.';
  }

  /** Appended to the answer when a step failed after the last re-plan. Override to change the wording. */
  protected replanLimitNote(state: StoredPlan): string {
    const failed = state.steps.filter((step) => step.status === 'failed').map((step) => `"${step.goal}"`);
    return `(I stopped after ${state.replans} re-plan${state.replans === 1 ? '' : 's'}; these steps failed: ${failed.join(', ')}.)`;
  }
}
