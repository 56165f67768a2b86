import { ConfigurationError } from '@switchboard/core';
import { stem, words } from './word-stems.js';

/** Something a {@link KeywordMatcher} can score a message for: an agent or a task. */
export interface MatchTarget {
  /** The agent or task name reported back in a {@link MatchScore}. */
  name: string;
  /** Words or phrases, matched case-insensitively, whole-word, tolerant of simple inflections. */
  keywords?: readonly string[];
  /** Regular expressions tested against the raw message. */
  patterns?: readonly RegExp[];
}

/** Weights of the scoring. */
export interface KeywordMatcherOptions {
  /** Score of a keyword per word it has: a two-word phrase scores 2 with the default 1. */
  wordWeight?: number;
  /**
   * Share of that score a keyword gets when found only in an inflected form
   * (`converting` for `convert`). Default 0.75, so that the literal keyword
   * wins a tie: "time" goes to the agent with `time`, not to the one with `times`.
   */
  inflectionWeight?: number;
  /** Score of a matching regular expression (default 2: as specific as a two-word phrase). */
  patternWeight?: number;
}

/** How well a message matches one target. */
export interface MatchScore {
  name: string;
  score: number;
  /** The keywords (as configured) and pattern sources that matched, in configuration order. */
  matched: string[];
}

interface CompiledKeyword {
  target: number;
  /** Position among the target's keywords, to report matches in configuration order. */
  position: number;
  keyword: string;
  words: readonly string[];
  stems: readonly string[];
}

interface CompiledTarget {
  name: string;
  patterns: readonly RegExp[];
}

/** Drops the `g` and `y` flags, whose `lastIndex` state would make `test()` alternate between calls. */
function statelessPattern(pattern: RegExp): RegExp {
  return pattern.global || pattern.sticky
    ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''))
    : pattern;
}

/** Whether `parts` appear in `tokens` from `start` on. */
function matchesAt(parts: readonly string[], tokens: readonly string[], start: number): boolean {
  for (let offset = 0; offset < parts.length; offset++) {
    if (tokens[start + offset] !== parts[offset]) return false;
  }
  return true;
}

/**
 * Scores messages against keyword lists and patterns compiled once, at
 * construction. Each distinct keyword found counts once per message, scoring
 * its number of words (so phrases outweigh single words), a little less when
 * found only in an inflected form; each matching pattern adds
 * `patternWeight`. Among equal scores the targets keep their declared order,
 * which is how ties are broken.
 *
 * Throws `ConfigurationError` for a keyword with no word or symbol in it, or
 * a pattern that is not a `RegExp`.
 *
 * @example
 * ```ts
 * const matcher = new KeywordMatcher([
 *   { name: 'clock', keywords: ['time', 'what time'] },
 *   { name: 'weather', keywords: ['rain', 'forecast'] },
 * ]);
 * matcher.best('What time is it?'); // { name: 'clock', score: 3, matched: ['time', 'what time'] }
 * ```
 */
export class KeywordMatcher {
  readonly #targets: readonly CompiledTarget[];
  /** Keywords indexed by the stem of their first word, so a message is scanned once. */
  readonly #byFirstStem = new Map<string, CompiledKeyword[]>();
  readonly #wordWeight: number;
  readonly #inflectionWeight: number;
  readonly #patternWeight: number;

  constructor(
    targets: readonly MatchTarget[],
    { wordWeight = 1, inflectionWeight = 0.75, patternWeight = 2 }: KeywordMatcherOptions = {},
  ) {
    this.#wordWeight = wordWeight;
    this.#inflectionWeight = inflectionWeight;
    this.#patternWeight = patternWeight;
    this.#targets = targets.map(({ name, keywords = [], patterns = [] }, target) => {
      keywords.forEach((keyword, position) => {
        const keywordWords = typeof keyword === 'string' ? words(keyword) : [];
        const stems = keywordWords.map(stem);
        const first = stems[0];
        if (first === undefined) {
          throw new ConfigurationError({
            message: `Keyword ${JSON.stringify(keyword)} of '${name}' has no word in it`,
          });
        }
        const entries = this.#byFirstStem.get(first) ?? [];
        entries.push({ target, position, keyword, words: keywordWords, stems });
        this.#byFirstStem.set(first, entries);
      });
      for (const pattern of patterns) {
        if (!(pattern instanceof RegExp)) {
          throw new ConfigurationError({
            message: `Pattern ${String(pattern)} of '${name}' is not a RegExp`,
          });
        }
      }
      return { name, patterns: patterns.map(statelessPattern) };
    });
  }

  /**
   * Every target with a positive score, best first; equal scores keep the
   * declared order. `candidates`, when given, limits the targets considered.
   */
  score(text: string, candidates?: ReadonlySet<string>): MatchScore[] {
    const textWords = words(text);
    const textStems = textWords.map(stem);
    // The distinct keywords found and their best weights: a repeated keyword counts once.
    const found: CompiledKeyword[] = [];
    const weights: number[] = [];
    for (let start = 0; start < textStems.length; start++) {
      const entries = this.#byFirstStem.get(textStems[start]!);
      if (entries === undefined) continue;
      for (const entry of entries) {
        if (!matchesAt(entry.stems, textStems, start)) continue;
        const exact = matchesAt(entry.words, textWords, start);
        const weight = entry.words.length * this.#wordWeight * (exact ? 1 : this.#inflectionWeight);
        const index = found.indexOf(entry);
        if (index < 0) {
          found.push(entry);
          weights.push(weight);
        } else if (weight > weights[index]!) weights[index] = weight;
      }
    }
    // Matches are reported per target in configuration order.
    const order = found.map((_, index) => index);
    if (order.length > 1) {
      order.sort((a, b) => found[a]!.target - found[b]!.target || found[a]!.position - found[b]!.position);
    }

    const scores: MatchScore[] = [];
    let next = 0;
    for (let index = 0; index < this.#targets.length; index++) {
      const target = this.#targets[index]!;
      // Most targets match nothing: their list is made only once something matched.
      let matched: string[] | undefined;
      let score = 0;
      for (; next < order.length && found[order[next]!]!.target === index; next++) {
        matched ??= [];
        matched.push(found[order[next]!]!.keyword);
        score += weights[order[next]!]!;
      }
      if (candidates && !candidates.has(target.name)) continue;
      for (const pattern of target.patterns) {
        if (!pattern.test(text)) continue;
        matched ??= [];
        matched.push(String(pattern));
        score += this.#patternWeight;
      }
      if (score > 0 && matched) scores.push({ name: target.name, score, matched });
    }
    // Array.prototype.sort is stable: equal scores keep the declared order.
    return scores.length > 1 ? scores.sort((a, b) => b.score - a.score) : scores;
  }

  /** The best-scoring target, or `undefined` when nothing matches. */
  best(text: string, candidates?: ReadonlySet<string>): MatchScore | undefined {
    return this.score(text, candidates)[0];
  }
}

/**
 * Formats scores for a decision's `thought`.
 * @example
 * ```ts
 * describeScores(matcher.score('what time is it, will it rain?')); // 'clock 3 (time, what time); weather 1 (rain)'
 * ```
 */
export function describeScores(scores: readonly MatchScore[]): string {
  return scores.map(({ name, score, matched }) => `${name} ${score} (${matched.join(', ')})`).join('; ');
}
