import type { ChatClient, LlmClientOptions } from '@switchboard/runtime';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import type { ConsensusAnswer } from './consensus-votes.js';
import { askForStructuredAnswer, jsonAnswerCheck, type StructuredAnswer } from './llm-structured-output.js';

/** A model as the judge of a {@link ConsensusOrchestrator}'s answers. */
export interface ConsensusJudgeOptions extends LlmClientOptions {
  /** The judging model, e.g. `gpt-4o-mini`. It must support JSON-schema structured output. */
  model: string;
  /** Replaces the judge's instructions at the top of the system prompt. */
  instructions?: string;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}

/** The judge's verdict. */
export interface JudgeVerdict {
  /** What the user reads. */
  answer: string;
  reason?: string;
}

/** The judge's default instructions. */
export const DEFAULT_JUDGE_INSTRUCTIONS =
  'You are the judge of a panel. Several agents answered the same question independently. ' +
  'Give the single best answer to the question, based only on their answers: where they agree, ' +
  'give that answer; where they disagree, prefer the best supported one and say briefly that the ' +
  'panel disagreed. Never add facts none of them gave.';

const RESPONSE_FORMAT: ResponseFormatJSONSchema = {
  type: 'json_schema',
  json_schema: {
    name: 'consensus_verdict',
    description: 'The answer the user reads, judged from the panel answers',
    strict: true,
    schema: {
      type: 'object',
      properties: {
        answer: { type: 'string', description: 'Exactly what the user reads' },
        reason: { type: 'string', description: 'A short justification: which answers agree, which do not' },
      },
      required: ['answer', 'reason'],
      additionalProperties: false,
    },
  },
};

const VERDICT = z.object({
  answer: z.string().regex(/\S/, 'must not be empty'),
  reason: z.string().optional(),
});

const checkVerdict = jsonAnswerCheck<JudgeVerdict>(VERDICT);

/**
 * Asks the judge model for the answer to `question` given the panel's
 * answers (structured output, validated, retried with feedback).
 */
export function askJudge(
  client: ChatClient,
  { model, instructions = DEFAULT_JUDGE_INSTRUCTIONS, maxRetries = 1, temperature }: ConsensusJudgeOptions,
  question: string,
  answers: readonly ConsensusAnswer[],
): Promise<StructuredAnswer<JudgeVerdict>> {
  const panel = answers.map(({ agent, content }, index) => `Answer ${index + 1} (${agent}):\n${content}`);
  return askForStructuredAnswer({
    client,
    model,
    temperature,
    maxRetries,
    responseFormat: RESPONSE_FORMAT,
    check: checkVerdict,
    messages: [
      { role: 'system', content: instructions },
      { role: 'user', content: `Question:\n${question}\n\n${panel.join('\n\n')}` },
    ],
  });
}
