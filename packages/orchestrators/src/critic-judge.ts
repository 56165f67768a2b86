import type { Conversation } from '@switchboard/core';
import type { ChatClient, LlmClientOptions, RetrievalBundle } from '@switchboard/runtime';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { askForDecision, type DecisionAnswer, jsonAnswerCheck } from './llm-structured-output.js';

/**
 * A model as the critic of {@link withCritic}: it scores each answer with
 * strict JSON output `{ score, issues, rewrite, escalate }` (an empty
 * `rewrite` for none). The score an answer needs to pass is `withCritic`'s
 * `threshold` option, as for a critic function.
 */
export interface CriticJudgeOptions extends LlmClientOptions {
  /** The judging model, e.g. `gpt-4o-mini`. It must support JSON-schema structured output. */
  model: string;
  /** Replaces the judge's role and criteria at the top of the system prompt. */
  instructions?: string;
  /** Further attempts after an invalid (non-JSON, out-of-range) verdict, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}

/** What the critic is shown of one answer. */
export interface CriticReview {
  /** The answer the user would read. */
  answer: string;
  /** The user message that started the turn. */
  request: string;
  /** The turn's agent replies so far, oldest first (the context the answer was written from). */
  replies: readonly { agent: string; status: 'ok' | 'error'; content: string }[];
  /** The retrieval bundles among those replies (from `retrievalAgent`s), oldest first: what the answer should rest on. */
  retrieval?: readonly RetrievalBundle[];
  /** 0 for the turn's first answer, 1 for the answer written after one send-back, … */
  attempt: number;
  /** The decision's conversation, read-only, for a critic that needs more (earlier history, the session). */
  conversation: Conversation;
}

/**
 * A critic's verdict on one answer. `score` runs from 0 (unusable) to 1
 * (ready to send); `issues` say what is wrong; a non-empty `rewrite` goes to
 * the user instead of the answer; `escalate` makes the answer wait for a
 * person's approval. `hallucinationRisk` (0 to 1) says how much of the
 * answer its sources do not support; with `withCritic`'s `hallucination`
 * check, an answer above its `maxRisk` does not pass.
 */
export interface CriticVerdict {
  score: number;
  issues?: readonly string[];
  rewrite?: string;
  escalate?: boolean;
  hallucinationRisk?: number;
}

/** The judge's default role and criteria. */
export const DEFAULT_CRITIC_INSTRUCTIONS =
  'You review the answer an assistant is about to give the user, before the user reads it. ' +
  "Check that it answers the user's request, that it is supported by the agents' replies and " +
  'adds nothing they did not say, and that it is clear and polite.';

const RULES = `Answer with a JSON object:
- score: from 0 (unusable) to 1 (ready to send), how good the answer is as it stands;
- issues: what is wrong or missing, one short item each; empty when nothing is;
- rewrite: a corrected answer the user should read instead, only when you can fix it from what is given; otherwise an empty string;
- escalate: true only when a person must approve the answer before the user reads it (a risky, sensitive or irreversible matter); otherwise false;
- hallucinationRisk: from 0 (everything the answer states comes from the agents' replies) to 1 (it states things they do not say).`;

const RESPONSE_FORMAT: ResponseFormatJSONSchema = {
  type: 'json_schema',
  json_schema: {
    name: 'critic_verdict',
    description: 'The review of an answer before the user reads it',
    strict: true,
    schema: {
      type: 'object',
      properties: {
        score: { type: 'number', minimum: 0, maximum: 1, description: '0 unusable … 1 ready to send' },
        issues: { type: 'array', items: { type: 'string' }, description: 'What is wrong or missing' },
        rewrite: { type: 'string', description: 'A corrected answer, or an empty string for none' },
        escalate: { type: 'boolean', description: 'A person must approve the answer first' },
        hallucinationRisk: {
          type: 'number',
          description: "0 all supported by the agents' replies … 1 states things they do not say",
        },
      },
      required: ['score', 'issues', 'rewrite', 'escalate', 'hallucinationRisk'],
      additionalProperties: false,
    },
  },
};

/**
 * A verdict as it may come from a model or a critic function, never trusted:
 * the score must be a number from 0 to 1, the issues strings.
 */
export const CriticVerdictSchema = z.object({
  score: z.number().min(0).max(1),
  issues: z.array(z.string()).optional(),
  rewrite: z.string().optional(),
  escalate: z.boolean().optional(),
  hallucinationRisk: z.number().min(0).max(1).optional(),
});

const checkVerdict = jsonAnswerCheck<CriticVerdict>(CriticVerdictSchema);

/** The review as the judge reads it: the request, the agents' replies (failures without detail), the answer. */
function reviewText({ request, replies, answer }: CriticReview): string {
  const context = replies.map((reply) =>
    reply.status === 'ok'
      ? `[Agent "${reply.agent}" replied]\n${reply.content}`
      : `[Agent "${reply.agent}" failed; the error is not shown]`,
  );
  return [
    `The user's request:\n${request}`,
    `The agents' replies:\n${context.join('\n\n') || '(none: the answer was written without agents)'}`,
    `The answer to review:\n${answer}`,
  ].join('\n\n');
}

/**
 * Asks the judge model for its verdict on one answer: a generation span under
 * the active span (the review's), its tokens counted on the decision. A
 * model that cannot be reached, or whose verdicts stay invalid, becomes a
 * `problem`; a cancelled turn throws.
 */
export function askCriticJudge(
  client: () => Promise<ChatClient>,
  { model, instructions = DEFAULT_CRITIC_INSTRUCTIONS, maxRetries = 1, temperature }: CriticJudgeOptions,
  review: CriticReview,
): Promise<DecisionAnswer<CriticVerdict>> {
  return askForDecision(review.conversation, {
    client,
    model,
    temperature,
    maxRetries,
    responseFormat: RESPONSE_FORMAT,
    check: checkVerdict,
    messages: [
      { role: 'system', content: `${instructions}\n\n${RULES}` },
      { role: 'user', content: reviewText(review) },
    ],
  });
}
