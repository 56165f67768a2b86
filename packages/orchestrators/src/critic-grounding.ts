import { ConfigurationError } from '@switchboard/core';
import type { RetrievalBundle } from '@switchboard/runtime';
import type { CriticReview, CriticVerdict } from './critic-judge.js';
import type { ReviewOutcome } from './critic-review.js';

/**
 * The hallucination check of `withCritic`: an answer whose risk exceeds
 * `maxRisk` does not pass, whatever its score.
 */
export interface HallucinationCheckOptions {
  /** The highest risk (0 to 1) an answer may have and still pass. Default 0.5. */
  maxRisk?: number;
  /**
   * Also measure the risk by lexical overlap with the retrieval bundles the
   * turn used (see {@link lexicalHallucinationRisk}), when it used any.
   * Default true.
   */
  lexical?: boolean;
}

/** Checked settings of the hallucination check. */
export interface HallucinationPolicy {
  readonly maxRisk: number;
  readonly lexical: boolean;
}

/** The checked policy, or undefined when the check is off. */
export function hallucinationPolicyOf(
  owner: string,
  options: HallucinationCheckOptions | boolean | undefined,
): HallucinationPolicy | undefined {
  if (options === undefined || options === false) return undefined;
  const { maxRisk = 0.5, lexical = true } = options === true ? {} : options;
  if (typeof maxRisk !== 'number' || !(maxRisk >= 0 && maxRisk <= 1))
    throw new ConfigurationError({ message: `${owner}: hallucination.maxRisk must be a number from 0 to 1` });
  return { maxRisk, lexical: lexical !== false };
}

const STOP_WORDS = new Set(
  (
    'about after also and any are because been before being between both but can could did does doing down during each ' +
    'few for from further had has have having her here hers him his how into its itself just more most not now off once ' +
    'only other our ours out over own same she should some such than that the their theirs them then there these they ' +
    'this those through too under until very was were what when where which while who whom why will with would you ' +
    'your yours yes'
  ).split(' '),
);
const WORD = /[\p{L}\p{N}]+/gu;
const SENTENCE = /[^.!?\n]+[.!?]?/g;
/** A sentence this short says too little to judge. */
const MIN_WORDS = 3;
/** The share of a sentence's words the sources must contain for it to count as supported. */
const SUPPORTED_SHARE = 0.5;

function stem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function contentWords(text: string): string[] {
  const words: string[] = [];
  for (const [word] of text.toLowerCase().matchAll(WORD))
    if ((word.length > 2 || /\d/.test(word)) && !STOP_WORDS.has(word)) words.push(stem(word));
  return words;
}

/**
 * How much of `answer` the retrieved sources do not support, from 0 to 1, by
 * lexical overlap (the seed critic's check): the share of the answer's
 * sentences (of at least three content words) whose content words are less
 * than half found in the bundles' items and summaries or in the user's
 * request. Common words are left out and plurals folded; it knows no
 * synonyms, so a faithful paraphrase can score as a risk: pair it with a
 * judge model's own `hallucinationRisk` where wording varies.
 *
 * @example
 * ```ts
 * lexicalHallucinationRisk('Refunds take five days.', [bundle], 'how long do refunds take?'); // 0 when a source says so
 * ```
 */
export function lexicalHallucinationRisk(
  answer: string,
  bundles: readonly RetrievalBundle[],
  request = '',
): number {
  const support = new Set(contentWords(request));
  for (const bundle of bundles) {
    for (const word of contentWords(bundle.summary)) support.add(word);
    for (const item of bundle.items) for (const word of contentWords(item.text)) support.add(word);
  }
  let judged = 0;
  let unsupported = 0;
  for (const [sentence] of answer.matchAll(SENTENCE)) {
    const words = contentWords(sentence);
    if (words.length < MIN_WORDS) continue;
    judged++;
    const found = words.filter((word) => support.has(word)).length;
    if (found / words.length < SUPPORTED_SHARE) unsupported++;
  }
  return judged === 0 ? 0 : Math.round((unsupported / judged) * 1000) / 1000;
}

/**
 * The verdict with its hallucination risk settled: the critic's own, or the
 * lexical one against the turn's retrieval bundles, whichever is higher;
 * above `maxRisk`, an issue saying so is added (the answer then does not
 * pass: see `judgeReview`).
 */
export function groundedOutcome(
  outcome: ReviewOutcome,
  review: CriticReview,
  policy: HallucinationPolicy | undefined,
): ReviewOutcome {
  if (!outcome.ok || !policy) return outcome;
  const bundles = review.retrieval ?? [];
  const lexical =
    policy.lexical && bundles.length > 0
      ? lexicalHallucinationRisk(review.answer, bundles, review.request)
      : undefined;
  const risk = Math.max(outcome.verdict.hallucinationRisk ?? 0, lexical ?? 0);
  if (outcome.verdict.hallucinationRisk === undefined && lexical === undefined) return outcome;
  const verdict: CriticVerdict = { ...outcome.verdict, hallucinationRisk: risk };
  if (risk > policy.maxRisk)
    verdict.issues = [
      ...(verdict.issues ?? []),
      `the answer states things the sources do not support (hallucination risk ${risk.toFixed(2)})`,
    ];
  return { ok: true, verdict };
}
