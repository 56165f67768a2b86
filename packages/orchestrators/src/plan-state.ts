import type { ToolMessage } from '@switchboard/core';
import { z } from 'zod';
import type { PlanStep } from './plan-schema.js';

/** Where a plan step stands. */
export type PlanStepStatus = 'pending' | 'running' | 'done' | 'failed';

const StepStateSchema = z.object({
  id: z.string(),
  goal: z.string(),
  agent: z.string(),
  dependsOn: z.array(z.string()),
  status: z.enum(['pending', 'running', 'done', 'failed']),
  /** The plan it belongs to: 1 for the first, 2 after the first re-plan, … */
  plan: z.number().int().min(1),
  /** The id of its agent call, once started. */
  callId: z.string().optional(),
  /** The agent's reply, or the safe description of its failure. */
  result: z.string().optional(),
});

/**
 * A turn's plan as kept in session memory, versioned: every step of every
 * plan the turn had (a re-plan keeps the done steps and drops the others;
 * failed steps stay, with their failure). Read back with
 * {@link parseStoredPlan}, never trusted.
 */
export const StoredPlanSchema = z.object({
  v: z.literal(1),
  turnId: z.string(),
  /** Re-plans made so far in the turn. */
  replans: z.number().int().min(0),
  /** Fan-outs made so far in the turn. */
  rounds: z.number().int().min(0),
  steps: z.array(StepStateSchema),
});

/** One step with its status. */
export type PlanStepState = z.infer<typeof StepStateSchema>;
/** A turn's plan, as stored. */
export type StoredPlan = z.infer<typeof StoredPlanSchema>;

/** The stored plan of `turnId`, or `undefined` when the value is absent, malformed or another turn's. */
export function parseStoredPlan(value: unknown, turnId: string): StoredPlan | undefined {
  const parsed = StoredPlanSchema.safeParse(value);
  return parsed.success && parsed.data.turnId === turnId ? parsed.data : undefined;
}

/** Adds a plan's steps, all pending, as plan number `plan`. */
export function withSteps(state: StoredPlan, steps: readonly PlanStep[], plan: number): StoredPlan {
  return {
    ...state,
    steps: [
      ...state.steps,
      ...steps.map((step) => ({ ...step, dependsOn: [...step.dependsOn], status: 'pending' as const, plan })),
    ],
  };
}

/** Marks the steps whose calls these replies answer as done or failed, with the reply as result. */
export function applyResults(state: StoredPlan, results: readonly ToolMessage[]): StoredPlan {
  const byCall = new Map(results.map((result) => [result.toolCallId, result]));
  return {
    ...state,
    steps: state.steps.map((step) => {
      const result = step.callId === undefined ? undefined : byCall.get(step.callId);
      if (!result || step.status !== 'running') return step;
      const ok = result.status === 'ok' && result.content.trim() !== '';
      return { ...step, status: ok ? 'done' : 'failed', result: result.content.trim() || 'empty reply' };
    }),
  };
}

/** The pending steps of the current plan whose dependencies are all done. */
export function readySteps(state: StoredPlan): PlanStepState[] {
  const done = new Set(state.steps.filter((step) => step.status === 'done').map((step) => step.id));
  return state.steps.filter(
    (step) => step.status === 'pending' && step.dependsOn.every((dependency) => done.has(dependency)),
  );
}

/** Keeps what is done and what failed (for the synthesis); drops what had not run, before a new plan. */
export function dropUnfinished(state: StoredPlan): StoredPlan {
  return {
    ...state,
    steps: state.steps.filter((step) => step.status === 'done' || step.status === 'failed'),
  };
}

/** What a step's annotations show of the plan: each step's id, goal, agent, dependencies, status and plan number. */
export function planView(steps: readonly PlanStepState[]) {
  return steps.map(({ id, goal, agent, dependsOn, status, plan }) => ({
    id,
    goal,
    agent,
    dependsOn: [...dependsOn],
    status,
    plan,
  }));
}

/** What a `plan` or `replan` note shows of the steps planned: each step's id, goal, agent and dependencies. */
export function describeSteps(steps: readonly PlanStep[]) {
  return steps.map(({ id, goal, agent, dependsOn }) => ({ id, goal, agent, dependsOn: [...dependsOn] }));
}
