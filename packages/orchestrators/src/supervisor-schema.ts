import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { type AnswerCheck, parseJson } from './llm-structured-output.js';

/** One independent piece of the user's request, for one agent. */
export interface SubGoal {
  /** A candidate agent's name. */
  agent: string;
  /** The task, self-contained, as the agent receives it. */
  task: string;
}

/** A supervisor model's answer: sub-goals to run now, or the text the user reads. */
export interface SupervisorAnswer {
  thought?: string;
  /** Empty when the model answers (or, after a round, has enough). */
  subGoals: SubGoal[];
  /** What the user reads; may be empty when there are sub-goals. */
  answer: string;
}

/** What a supervisor model call is for. */
export type SupervisorStage = 'decompose' | 'synthesise' | 'synthesise-final';

const FIELDS = 'thought, subgoals (a list of { agent, task }) and answer';

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'answer'}: ${issue.message}`).join('; ');
}

/**
 * The strict JSON schema and validator of one supervisor model call, for one
 * set of candidate agents. In the last synthesis (`synthesise-final`) the
 * answer must be written whatever the model asks for; sub-goals are then
 * reported but not run.
 *
 * @example
 * ```ts
 * const { responseFormat, check } = supervisorSchema(['flights', 'hotels'], 'decompose');
 * check('{"thought":"","subgoals":[{"agent":"hotels","task":"Find a hotel in Rome"}],"answer":""}');
 * ```
 */
export function supervisorSchema(
  names: readonly string[],
  stage: SupervisorStage,
): { responseFormat: ResponseFormatJSONSchema; check(content: string): AnswerCheck<SupervisorAnswer> } {
  const choices = names.map((name) => `"${name}"`).join(', ');
  const validator = z.object({
    thought: z.string().optional(),
    subgoals: z.array(z.object({ agent: z.string(), task: z.string().regex(/\S/, 'must not be empty') })),
    answer: z.string(),
  });
  const responseFormat: ResponseFormatJSONSchema = {
    type: 'json_schema',
    json_schema: {
      name: stage === 'decompose' ? 'supervisor_plan' : 'supervisor_synthesis',
      description:
        stage === 'decompose'
          ? "Independent sub-goals of the user's request, one per agent, or a direct answer"
          : 'The answer from the agents’ results, or further sub-goals',
      strict: true,
      schema: {
        type: 'object',
        properties: {
          thought: { type: 'string', description: 'Brief reasoning' },
          subgoals: {
            type: 'array',
            description: 'Independent sub-goals, at most one per agent; empty to answer now',
            items: {
              type: 'object',
              properties: {
                agent: { type: 'string', enum: [...names], description: 'The agent that handles it' },
                task: { type: 'string', description: 'The task, self-contained' },
              },
              required: ['agent', 'task'],
              additionalProperties: false,
            },
          },
          answer: {
            type: 'string',
            description: 'Exactly what the user reads; empty when there are sub-goals',
          },
        },
        required: ['thought', 'subgoals', 'answer'],
        additionalProperties: false,
      },
    },
  };

  function reject(problem: string): AnswerCheck<SupervisorAnswer> {
    return { ok: false, feedback: `${problem} Answer again with a JSON object with the fields ${FIELDS}.` };
  }

  function check(content: string): AnswerCheck<SupervisorAnswer> {
    const json = parseJson(content);
    if (!json.ok) return reject(`Your answer was not valid JSON (${json.error}).`);
    const parsed = validator.safeParse(json.value);
    if (!parsed.success)
      return reject(`Your answer did not match the required format (${describeIssues(parsed.error)}).`);
    const { thought, subgoals, answer } = parsed.data;
    const unknown = subgoals.filter((goal) => !names.includes(goal.agent)).map((goal) => `"${goal.agent}"`);
    if (unknown.length > 0) {
      return reject(
        `${unknown.join(', ')} ${unknown.length > 1 ? 'are not available agents' : 'is not an available agent'}. Choose "agent" from: ${choices}.`,
      );
    }
    const agents = subgoals.map((goal) => goal.agent);
    if (new Set(agents).size !== agents.length) {
      return reject('Give each agent at most one sub-goal: merge the tasks of the same agent.');
    }
    const final = stage === 'synthesise-final';
    if ((subgoals.length === 0 || final) && answer.trim() === '') {
      return reject(
        final
          ? 'No more agents can be asked: write the answer from what is known, and say what is still missing.'
          : 'Give sub-goals, or write the answer the user reads.',
      );
    }
    return { ok: true, value: { thought, subGoals: subgoals, answer: answer.trim() } };
  }

  return { responseFormat, check };
}
