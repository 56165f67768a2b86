import type { AgentMeta, Conversation, ToolMessage } from '@switchboard/core';
import { z } from 'zod';
import {
  type CompiledCondition,
  type CompiledStep,
  matchesAgent,
  type StepRuleState,
} from './step-rules-config.js';

/**
 * A session's step state as kept in session memory, versioned. Read back
 * with {@link parseStepState}, never trusted.
 */
export const StoredStepStateSchema = z.object({
  v: z.literal(1),
  activeStep: z.string().optional(),
  /** Agents that replied successfully, oldest first, at most `recentWindow`. */
  recent: z.array(z.string()),
  /** Progress through the active step's sequence. */
  sequenceIndex: z.number().int().min(0),
  /** The call ids of the replies applied last, so that a decision run again does not count them twice. */
  applied: z.array(z.string()),
});

/** A session's step state, as stored. */
export type StoredStepState = z.infer<typeof StoredStepStateSchema>;

/** The state of a session the rules have not seen yet. */
export const FRESH_STATE: StoredStepState = Object.freeze({
  v: 1,
  recent: [],
  sequenceIndex: 0,
  applied: [],
});

/** The stored state, or `undefined` when the value is absent or malformed. */
export function parseStepState(value: unknown): StoredStepState | undefined {
  const parsed = StoredStepStateSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Counts the replies to the previous decision: each successful one joins
 * the recent calls, and advances the active step's sequence when it is
 * from the sequence's next agent. A failed reply counts for nothing.
 */
export function applyReplies(
  state: StoredStepState,
  replies: readonly ToolMessage[],
  activeStep: CompiledStep | undefined,
  recentWindow: number,
): StoredStepState {
  const ids = replies.map((reply) => reply.toolCallId);
  if (ids.length === 0 || ids.every((id) => state.applied.includes(id))) return state;
  const recent = [...state.recent];
  let { sequenceIndex } = state;
  const sequence = activeStep?.sequence ?? [];
  for (const reply of replies) {
    if (reply.status !== 'ok') continue;
    recent.push(reply.name);
    if (sequence[sequenceIndex] === reply.name) sequenceIndex += 1;
  }
  return { ...state, recent: recent.slice(-recentWindow), sequenceIndex, applied: ids };
}

/** The step chosen for a decision, why, and the state with it. */
export interface StepChoice {
  step?: CompiledStep;
  reason: string;
  state: StoredStepState;
}

function holds(condition: CompiledCondition, state: StepRuleState, conversation: Conversation): boolean {
  const recent = state.recentlyUsed;
  switch (condition.kind) {
    case 'used':
      return recent.includes(condition.agent);
    case 'sequence': {
      const { sequence } = condition;
      const tail = recent.slice(-sequence.length);
      return tail.length === sequence.length && sequence.every((name, index) => tail[index] === name);
    }
    case 'predicate':
      return condition.test(state, conversation) === true;
  }
}

/** The state as conditions see it. */
export function ruleState(state: StoredStepState): StepRuleState {
  return { activeStep: state.activeStep, recentlyUsed: state.recent, sequenceIndex: state.sequenceIndex };
}

/**
 * Chooses the active step: the first step, in order, whose conditions all
 * hold; else the step already active; else the default step; else none.
 * Changing step starts the new step's sequence from its beginning.
 */
export function chooseStep(
  steps: readonly CompiledStep[],
  state: StoredStepState,
  conversation: Conversation,
  { newSession }: { newSession: boolean },
): StepChoice {
  const seen = ruleState(state);
  let step: CompiledStep | undefined;
  let reason: string;
  for (const candidate of steps) {
    const { conditions } = candidate;
    if (conditions.length > 0 && conditions.every((condition) => holds(condition, seen, conversation))) {
      step = candidate;
      break;
    }
  }
  if (step) {
    reason = `conditions hold: ${step.conditions.map((condition) => condition.label).join('; ')}`;
  } else {
    const current = steps.find((candidate) => candidate.name === state.activeStep);
    step = current ?? steps.find((candidate) => candidate.isDefault);
    if (current) reason = "still active: no step's conditions hold";
    else if (step)
      reason = newSession ? 'default step of a new session' : "default step: no step's conditions hold";
    else reason = 'no step is active: no conditions hold and there is no default step';
  }
  if (step?.name === state.activeStep) return { step, reason, state };
  const next: StoredStepState = { ...state, sequenceIndex: 0 };
  if (step) next.activeStep = step.name;
  else delete next.activeStep;
  return { step, reason, state: next };
}

/** The next agent of the step's sequence, while it runs. */
export function nextInSequence(step: CompiledStep | undefined, sequenceIndex: number): string | undefined {
  return step?.sequence[sequenceIndex];
}

/**
 * The candidates the active step leaves: the sequence's next agent while it
 * runs; then those `allowed` lists (all when it is empty) minus those
 * `denied` lists. Without a step, every candidate.
 */
export function allowedAgents(
  step: CompiledStep | undefined,
  sequenceIndex: number,
  candidates: readonly AgentMeta[],
): readonly AgentMeta[] {
  if (!step) return candidates;
  const next = nextInSequence(step, sequenceIndex);
  if (next !== undefined) return candidates.filter((agent) => agent.name === next);
  const { allowed, denied } = step;
  if (allowed.length === 0 && denied.length === 0) return candidates;
  return candidates.filter(
    (agent) =>
      (allowed.length === 0 || allowed.some((pattern) => matchesAgent(pattern, agent.name))) &&
      !denied.some((pattern) => matchesAgent(pattern, agent.name)),
  );
}
