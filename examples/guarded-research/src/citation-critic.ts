import type { CriticJudgeOptions, CriticReview, CriticVerdict } from '@switchboard/orchestrators';
import OpenAI from 'openai';
import { parseSources } from './notes.js';

/**
 * The offline critic: an answer written from sources must cite at least one
 * of them as `[n]`, and only sources the research found. An answer without
 * sources to cite (nothing found, the search failed) passes.
 *
 * @example
 * ```ts
 * withCritic(router, citationCritic); // an uncited answer scores 0.3 and is sent back once
 * ```
 */
export function citationCritic({ answer, replies }: CriticReview): CriticVerdict {
  const found = new Set(
    replies
      .filter((reply) => reply.agent === 'research' && reply.status === 'ok')
      .flatMap((reply) => parseSources(reply.content).map((source) => source.n)),
  );
  if (found.size === 0) return { score: 1 };
  const cited = [...answer.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1]));
  const invented = [...new Set(cited.filter((n) => !found.has(n)))];
  if (invented.length > 0) {
    return {
      score: 0.2,
      issues: [`It cites ${invented.map((n) => `[${n}]`).join(', ')}, which the research did not find.`],
    };
  }
  if (cited.length === 0) {
    return { score: 0.3, issues: ['It cites none of the sources the research found; cite them as [n].'] };
  }
  return { score: 1 };
}

/** What the model judge checks, in place of the default criteria. */
export const JUDGE_INSTRUCTIONS =
  'You review a research answer before the user reads it. The research agent replied with numbered sources [n]. ' +
  'Score below 0.5 when the answer cites none of them, or cites a number the research did not give, ' +
  'or states something no source says. Otherwise score from 0.7 up. Never rewrite the answer.';

/** Options of {@link modelJudge}. */
export interface ModelJudgeOptions {
  /** The judging model, e.g. `gpt-4o-mini`; it must support JSON-schema structured output. */
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible endpoint including `/v1`; OpenAI's when absent. */
  baseURL?: string;
  /** Retries of the `openai` client on 429/5xx (default 2). */
  maxRetries?: number;
}

/**
 * A model as the critic, checking what {@link citationCritic} checks and
 * whether the answer sticks to its sources.
 *
 * @example
 * ```ts
 * buildApp({ critic: modelJudge({ model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY! }) });
 * ```
 */
export function modelJudge({
  model,
  apiKey,
  baseURL,
  maxRetries = 2,
}: ModelJudgeOptions): CriticJudgeOptions {
  return {
    model,
    client: new OpenAI({ apiKey, baseURL, maxRetries }),
    instructions: JUDGE_INSTRUCTIONS,
  };
}
