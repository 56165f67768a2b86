/**
 * What a `PlanExecuteOrchestrator` asks its model, one structured call each:
 * a plan, a new plan after a failed step, a review of a round's results, and
 * the answer from the steps' results (streamed to the client). Each comes
 * with its prompt, its schema and the part of the conversation it sees.
 *
 * @module
 */
import { type Conversation, discardStreamedAnswer, streamAnswer } from '@switchboard/core';
import type { ChatClient } from '@switchboard/runtime';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { routerConversation } from './llm-route-prompt.js';
import {
  type AnswerCheck,
  askForDecision,
  type DecisionAnswer,
  type StreamedField,
} from './llm-structured-output.js';
import { planPrompt, planSynthesisPrompt, renderPlan, replanPrompt, reviewPrompt } from './plan-prompt.js';
import { planReviewSchema, planSchema, planSynthesisSchema } from './plan-schema.js';
import type { StoredPlan } from './plan-state.js';

/** The planning model and how it is asked, fixed when the orchestrator is made. */
export interface PlanModel {
  client: () => Promise<ChatClient>;
  model: string;
  /** The role description of the planning prompts. */
  instructions: string;
  historyWindow: number;
  maxRetries: number;
  temperature?: number;
}

/** A plan for the turn's request, among the agents `names`. */
export function askForPlan(planModel: PlanModel, conversation: Conversation, names: string[]) {
  return ask(planModel, conversation, planSchema(names), [
    { role: 'system', content: planPrompt(planModel.instructions, conversation.agents) },
    ...routerConversation(conversation, planModel.historyWindow),
  ]);
}

/** A new plan for the work that remains after a step failed. */
export function askForReplan(planModel: PlanModel, conversation: Conversation, state: StoredPlan) {
  const { names, progress } = planSoFar(conversation, state);
  return ask(
    planModel,
    conversation,
    planSchema(names, { ...progress, replan: true }),
    withPlanSoFar(planModel, conversation, state, replanPrompt(planModel.instructions, conversation.agents)),
  );
}

/** A review of the results so far: keep the remaining steps, or replace them. */
export function askForReview(planModel: PlanModel, conversation: Conversation, state: StoredPlan) {
  const { names, progress } = planSoFar(conversation, state);
  return ask(
    planModel,
    conversation,
    planReviewSchema(names, progress),
    withPlanSoFar(planModel, conversation, state, reviewPrompt(planModel.instructions, conversation.agents)),
  );
}

/** The agents' names and the plan's steps done and taken, which a replan or a review may not reuse. */
function planSoFar(conversation: Conversation, state: StoredPlan) {
  return {
    names: conversation.agents.map((agent) => agent.name),
    progress: {
      done: state.steps.filter((step) => step.status === 'done').map((step) => step.id),
      taken: state.steps.map((step) => step.id),
    },
  };
}

/** The messages of a replan or a review: its prompt, the request, and the plan so far. */
function withPlanSoFar(
  planModel: PlanModel,
  conversation: Conversation,
  state: StoredPlan,
  prompt: string,
): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: prompt },
    ...request(planModel, conversation),
    { role: 'user', content: `The plan so far:\n\n${renderPlan(state.steps)}` },
  ];
}

/** The answer, written from the steps' results; it streams to the client as the model writes it. */
export function askForSynthesis(planModel: PlanModel, conversation: Conversation, state: StoredPlan) {
  return ask(
    planModel,
    conversation,
    planSynthesisSchema(),
    [
      { role: 'system', content: planSynthesisPrompt() },
      ...request(planModel, conversation),
      { role: 'user', content: `The steps and their results:\n\n${renderPlan(state.steps)}` },
    ],
    // The answer streams to the client as the model writes it.
    {
      name: 'answer',
      onText: (text) => streamAnswer(conversation, text),
      onDiscard: () => discardStreamedAnswer(conversation),
    },
  );
}

/** The history up to and including the turn's user message, without the agents' replies. */
function request(planModel: PlanModel, conversation: Conversation): ChatCompletionMessageParam[] {
  return routerConversation(
    { ...conversation, messages: conversation.messages.slice(0, conversation.turnStart + 1) },
    planModel.historyWindow,
  );
}

/** One structured model call: the valid answer, or what went wrong. API errors become a problem unless the request was cancelled. */
function ask<Value>(
  planModel: PlanModel,
  conversation: Conversation,
  schema: { responseFormat: ResponseFormatJSONSchema; check(content: string): AnswerCheck<Value> },
  messages: ChatCompletionMessageParam[],
  streamField?: StreamedField,
): Promise<DecisionAnswer<Value>> {
  return askForDecision(conversation, {
    client: planModel.client,
    model: planModel.model,
    temperature: planModel.temperature,
    messages,
    responseFormat: schema.responseFormat,
    check: schema.check,
    maxRetries: planModel.maxRetries,
    ...(streamField ? { streamField } : {}),
  });
}
