import type { ChatClient, LlmClientOptions } from '@switchboard/runtime';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { askForStructuredAnswer, jsonAnswerCheck, type StructuredAnswer } from './llm-structured-output.js';

/** A model as the judge of a {@link bestOf} executor's candidates. */
export interface StrategyJudgeOptions extends LlmClientOptions {
  /** The judging model, e.g. `gpt-4o-mini`. It must support JSON-schema structured output. */
  model: string;
  /** Replaces the judge's instructions at the top of the system prompt. */
  instructions?: string;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}

/** One candidate reply, as scored. */
export interface StrategyCandidate {
  agent: string;
  content: string;
}

/** The judge's scores: one per candidate (by position, from 1), its pick and why. */
export interface StrategyJudgeVerdict {
  scores: { candidate: number; score: number; reason: string }[];
  best: number;
  reason: string;
}

/** The judge's default instructions. */
export const DEFAULT_STRATEGY_JUDGE_INSTRUCTIONS =
  'You judge candidate answers to the same request, each written by a different agent. ' +
  'Score every candidate from 0 (useless or wrong) to 1 (complete and correct) for how well it ' +
  'answers the request, with a short reason, and name the best candidate by its number.';

const RESPONSE_FORMAT: ResponseFormatJSONSchema = {
  type: 'json_schema',
  json_schema: {
    name: 'best_of_verdict',
    description: 'A score for every candidate answer and the best one',
    strict: true,
    schema: {
      type: 'object',
      properties: {
        scores: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              candidate: { type: 'integer', description: 'The candidate number, from 1' },
              score: { type: 'number', description: 'From 0 to 1' },
              reason: { type: 'string', description: 'Why this score, in one sentence' },
            },
            required: ['candidate', 'score', 'reason'],
            additionalProperties: false,
          },
        },
        best: { type: 'integer', description: 'The number of the best candidate' },
        reason: { type: 'string', description: 'Why the best candidate won, in one sentence' },
      },
      required: ['scores', 'best', 'reason'],
      additionalProperties: false,
    },
  },
};

function verdictSchema(count: number) {
  const candidate = z.number().int().min(1).max(count);
  return z.object({
    scores: z
      .array(z.object({ candidate, score: z.number().min(0).max(1), reason: z.string().max(500) }))
      .max(count),
    best: candidate,
    reason: z.string().max(1000),
  });
}

/**
 * Asks the judge model to score each candidate answer to `question`
 * (structured output, validated, retried with feedback).
 */
export function askStrategyJudge(
  client: ChatClient,
  {
    model,
    instructions = DEFAULT_STRATEGY_JUDGE_INSTRUCTIONS,
    maxRetries = 1,
    temperature,
  }: StrategyJudgeOptions,
  question: string,
  candidates: readonly StrategyCandidate[],
): Promise<StructuredAnswer<StrategyJudgeVerdict>> {
  const listed = candidates.map(
    ({ agent, content }, index) => `Candidate ${index + 1} (${agent}):\n${content}`,
  );
  return askForStructuredAnswer({
    client,
    model,
    temperature,
    maxRetries,
    responseFormat: RESPONSE_FORMAT,
    check: jsonAnswerCheck<StrategyJudgeVerdict>(verdictSchema(candidates.length)),
    messages: [
      { role: 'system', content: instructions },
      { role: 'user', content: `Request:\n${question}\n\n${listed.join('\n\n')}` },
    ],
  });
}
