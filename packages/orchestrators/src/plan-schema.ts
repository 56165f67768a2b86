import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { type AnswerCheck, parseJson } from './llm-structured-output.js';

/** One step of a plan, for one agent. */
export interface PlanStep {
  /** Unique within the turn, e.g. `flights`. */
  id: string;
  /** What the step must achieve, as the agent receives it (with its dependencies' results). */
  goal: string;
  /** A candidate agent's name. */
  agent: string;
  /** The ids of the steps whose results this one needs. */
  dependsOn: string[];
}

/** A planning model's answer: steps to run, or the text the user reads. */
export interface PlanAnswer {
  thought?: string;
  /** Empty when the model answers directly (hop 0) or sees nothing more to do (a re-plan). */
  steps: PlanStep[];
  answer: string;
}

const PLAN_FIELDS = 'thought, steps (a list of { id, goal, agent, dependsOn }) and answer';
const STEP_ID = /^[A-Za-z0-9_-]{1,40}$/;

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'answer'}: ${issue.message}`).join('; ');
}

/** The first dependency cycle among `steps`, as ids (`a → b → a`), or `undefined`. */
export function findCycle(steps: readonly Pick<PlanStep, 'id' | 'dependsOn'>[]): string[] | undefined {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const dependency of byId.get(id)?.dependsOn ?? []) {
      if (!byId.has(dependency)) continue;
      const cycle = visit(dependency);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle) return cycle;
  }
  return undefined;
}

/**
 * The strict JSON schema and validator of a plan for one set of candidate
 * agents. In a re-plan, `done` are the ids of the turn's steps that are done
 * (new steps may depend on them) and `taken` every id used so far (new steps
 * may not reuse them). Unknown agents,
 * unknown dependencies, duplicate ids and dependency cycles are rejected with
 * feedback that names the problem.
 *
 * @example
 * ```ts
 * const { responseFormat, check } = planSchema(['flights', 'hotels']);
 * check('{"thought":"","steps":[{"id":"f","goal":"Flights to Rome","agent":"flights","dependsOn":[]}],"answer":""}');
 * ```
 */
export function planSchema(
  names: readonly string[],
  {
    done = [],
    taken = done,
    replan = false,
  }: { done?: readonly string[]; taken?: readonly string[]; replan?: boolean } = {},
): { responseFormat: ResponseFormatJSONSchema; check(content: string): AnswerCheck<PlanAnswer> } {
  const choices = names.map((name) => `"${name}"`).join(', ');
  const validator = z.object({
    thought: z.string().optional(),
    steps: z.array(
      z.object({
        id: z.string().regex(STEP_ID, 'must be 1 to 40 letters, digits, "_" or "-"'),
        goal: z.string().regex(/\S/, 'must not be empty'),
        agent: z.string(),
        dependsOn: z.array(z.string()),
      }),
    ),
    answer: z.string(),
  });
  const responseFormat: ResponseFormatJSONSchema = {
    type: 'json_schema',
    json_schema: {
      name: replan ? 'revised_plan' : 'plan',
      description: replan
        ? 'A new plan for the remaining work, or no steps when nothing more can be done'
        : "A plan of steps for the user's request, or a direct answer",
      strict: true,
      schema: {
        type: 'object',
        properties: {
          thought: { type: 'string', description: 'Brief reasoning' },
          steps: {
            type: 'array',
            description: 'The steps; empty to answer now',
            items: {
              type: 'object',
              properties: {
                id: { type: 'string', description: 'A short unique id, e.g. "flights"' },
                goal: { type: 'string', description: 'What the step must achieve, self-contained' },
                agent: { type: 'string', enum: [...names], description: 'The agent that does it' },
                dependsOn: {
                  type: 'array',
                  items: { type: 'string' },
                  description: 'Ids of the steps whose results it needs',
                },
              },
              required: ['id', 'goal', 'agent', 'dependsOn'],
              additionalProperties: false,
            },
          },
          answer: { type: 'string', description: 'What the user reads when there are no steps' },
        },
        required: ['thought', 'steps', 'answer'],
        additionalProperties: false,
      },
    },
  };

  function reject(problem: string): AnswerCheck<PlanAnswer> {
    return {
      ok: false,
      feedback: `${problem} Answer again with a JSON object with the fields ${PLAN_FIELDS}.`,
    };
  }

  function check(content: string): AnswerCheck<PlanAnswer> {
    const json = parseJson(content);
    if (!json.ok) return reject(`Your answer was not valid JSON (${json.error}).`);
    const parsed = validator.safeParse(json.value);
    if (!parsed.success)
      return reject(`Your answer did not match the required format (${describeIssues(parsed.error)}).`);
    const { thought, steps, answer } = parsed.data;
    const unknown = steps.filter((step) => !names.includes(step.agent)).map((step) => `"${step.agent}"`);
    if (unknown.length > 0) {
      return reject(
        `${[...new Set(unknown)].join(', ')} ${unknown.length > 1 ? 'are not available agents' : 'is not an available agent'}. Choose "agent" from: ${choices}.`,
      );
    }
    const ids = steps.map((step) => step.id);
    const reused = ids.filter((id, index) => ids.indexOf(id) !== index || taken.includes(id));
    if (reused.length > 0)
      return reject(
        `Step ids must be unique in the turn: ${[...new Set(reused)].join(', ')} is used already.`,
      );
    const known = new Set([...ids, ...done]);
    for (const step of steps) {
      const missing = step.dependsOn.filter((dependency) => !known.has(dependency));
      if (missing.length > 0)
        return reject(
          `Step "${step.id}" depends on unknown step${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
        );
    }
    const cycle = findCycle(steps);
    if (cycle)
      return reject(
        `The plan has a dependency cycle: ${cycle.join(' → ')}. Steps must not depend on each other in a loop.`,
      );
    if (steps.length === 0 && !replan && answer.trim() === '')
      return reject('Give steps, or write the answer the user reads.');
    return { ok: true, value: { thought, steps, answer: answer.trim() } };
  }

  return { responseFormat, check };
}

/** A review of the plan after a round: keep the remaining steps, or replace them. */
export type PlanReview = { revise: false; thought?: string } | ({ revise: true } & PlanAnswer);

/**
 * The strict JSON schema and validator of a review after a round: `revise`
 * false keeps the remaining steps as they are; true replaces them with
 * `steps` (checked like a re-plan: `done` and `taken` as in
 * {@link planSchema}), or, with no steps, ends the work so the answer can be
 * written.
 *
 * @example
 * ```ts
 * const { check } = planReviewSchema(['flights', 'hotels'], { done: ['f'], taken: ['f', 'h'] });
 * check('{"thought":"still fits","revise":false,"steps":[],"answer":""}');
 * ```
 */
export function planReviewSchema(
  names: readonly string[],
  { done, taken }: { done: readonly string[]; taken: readonly string[] },
): { responseFormat: ResponseFormatJSONSchema; check(content: string): AnswerCheck<PlanReview> } {
  const plan = planSchema(names, { done, taken, replan: true });
  const inner = plan.responseFormat.json_schema.schema as {
    properties: Record<string, unknown>;
    required: string[];
  };
  const responseFormat: ResponseFormatJSONSchema = {
    type: 'json_schema',
    json_schema: {
      name: 'plan_review',
      description:
        'Whether the remaining steps still fit the results so far, and if not, the steps that replace them',
      strict: true,
      schema: {
        type: 'object',
        properties: {
          thought: inner.properties.thought,
          revise: { type: 'boolean', description: 'true to replace the remaining steps with "steps"' },
          steps: inner.properties.steps,
          answer: { type: 'string', description: 'Leave empty' },
        },
        required: ['thought', 'revise', 'steps', 'answer'],
        additionalProperties: false,
      },
    },
  };
  function check(content: string): AnswerCheck<PlanReview> {
    const json = parseJson(content);
    const revise = json.ok ? (json.value as { revise?: unknown } | null)?.revise : undefined;
    if (typeof revise !== 'boolean') {
      return {
        ok: false,
        feedback: `Your answer needs "revise": true or false. Answer again with a JSON object with the fields thought, revise, ${PLAN_FIELDS.replace('thought, ', '')}.`,
      };
    }
    if (!revise) {
      const thought = (json as { value: { thought?: unknown } }).value.thought;
      return {
        ok: true,
        value: { revise: false, thought: typeof thought === 'string' ? thought : undefined },
      };
    }
    const checked = plan.check(content);
    return checked.ok ? { ok: true, value: { revise: true, ...checked.value } } : checked;
  }
  return { responseFormat, check };
}

/**
 * The strict JSON schema and validator of a synthesis: `{ thought, answer }`
 * with a non-empty answer.
 * @example
 * ```ts
 * const { check } = planSynthesisSchema();
 * check('{"thought":"","answer":"Fly on Friday."}');
 * ```
 */
export function planSynthesisSchema(): {
  responseFormat: ResponseFormatJSONSchema;
  check(content: string): AnswerCheck<{ thought?: string; answer: string }>;
} {
  const validator = z.object({
    thought: z.string().optional(),
    answer: z.string().regex(/\S/, 'must not be empty'),
  });
  const responseFormat: ResponseFormatJSONSchema = {
    type: 'json_schema',
    json_schema: {
      name: 'plan_synthesis',
      description: "The answer to the user's request from the steps' results",
      strict: true,
      schema: {
        type: 'object',
        properties: {
          thought: { type: 'string', description: 'Brief reasoning' },
          answer: { type: 'string', description: 'Exactly what the user reads' },
        },
        required: ['thought', 'answer'],
        additionalProperties: false,
      },
    },
  };
  function check(content: string): AnswerCheck<{ thought?: string; answer: string }> {
    const json = parseJson(content);
    const parsed = json.ok ? validator.safeParse(json.value) : undefined;
    if (parsed?.success)
      return { ok: true, value: { thought: parsed.data.thought, answer: parsed.data.answer.trim() } };
    const problem = json.ok ? describeIssues(parsed!.error!) : `not valid JSON (${json.error})`;
    return {
      ok: false,
      feedback: `Your answer was invalid (${problem}). Answer again with a JSON object with the fields thought and answer.`,
    };
  }
  return { responseFormat, check };
}
