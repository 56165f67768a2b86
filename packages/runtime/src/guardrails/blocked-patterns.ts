import { ConfigurationError } from '@switchboard/core';
import { BLOCKED_PATTERN_RULES, type BlockedPatternRule } from './blocked-pattern-rules.js';
import type { GuardCheck, Guardrail, GuardStage } from './guardrail.js';

export { BLOCKED_PATTERN_RULES, type BlockedPatternRule } from './blocked-pattern-rules.js';

/** Options of {@link blockedPatterns}. */
export interface BlockedPatternsOptions {
  /** The guardrail's name, recorded with each block (default `blocked-patterns`). */
  name?: string;
  /** More rules, tried after the built-in ones; names must not repeat. */
  extra?: readonly BlockedPatternRule[];
  /** Names of built-in rules to turn off (see {@link BLOCKED_PATTERN_RULES}). */
  disable?: readonly string[];
  /**
   * How many characters one pattern test reads at most (default 65 536).
   * Longer texts are checked in windows of this size that overlap by
   * 1 024 characters, so every part is checked (padding cannot push an
   * attack past the limit) while a pattern never runs on more than this.
   */
  maxScanLength?: number;
  /** The agents whose `toolInput`/`toolOutput` are checked (default: every agent). */
  agents?: readonly string[];
}

const ALL_STAGES: readonly GuardStage[] = ['input', 'output', 'toolInput', 'toolOutput'];
const WINDOW_OVERLAP = 1024;
const DEFAULT_MESSAGE = 'This was not processed: it matches a pattern that is not allowed.';
/** Characters that render as nothing and would split a phrase: "ig\u200bnore". */
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/g;
const WHITESPACE = /\s+/g;

/**
 * The text the patterns see: NFKC (full-width and styled letters become
 * plain), invisible characters removed, each run of whitespace one space,
 * or one newline when it holds one, so `\s+` in a pattern never has to
 * cross a long run and lines stay lines.
 */
function normalise(text: string): string {
  return text
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .replace(WHITESPACE, (run) => (run.includes('\n') ? '\n' : ' '));
}

/** `pattern` without `g` and `y`, whose `lastIndex` would make `test` depend on the previous call. */
function stateless(pattern: RegExp): RegExp {
  return pattern.global || pattern.sticky
    ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''))
    : pattern;
}

function matches(pattern: RegExp, text: string, windowSize: number): boolean {
  if (text.length <= windowSize) return pattern.test(text);
  for (let start = 0; start < text.length; start += windowSize - WINDOW_OVERLAP) {
    if (pattern.test(text.slice(start, start + windowSize))) return true;
    if (start + windowSize >= text.length) break;
  }
  return false;
}

/** The rules in effect, checked for unknown names, repeated names and unknown stages. */
function rulesOf(extra: readonly BlockedPatternRule[], disable: readonly string[]): BlockedPatternRule[] {
  const builtIn = new Set(BLOCKED_PATTERN_RULES.map((rule) => rule.name));
  const unknown = disable.filter((name) => !builtIn.has(name));
  if (unknown.length) {
    throw new ConfigurationError({
      message: `blockedPatterns: cannot disable unknown rule(s) ${unknown.join(', ')} (built-in: ${[...builtIn].join(', ')})`,
    });
  }
  const rules = [...BLOCKED_PATTERN_RULES.filter((rule) => !disable.includes(rule.name)), ...extra];
  const seen = new Set<string>();
  for (const rule of rules) {
    if (seen.has(rule.name)) {
      throw new ConfigurationError({
        message: `blockedPatterns: two rules are named '${rule.name}'; rename the extra one`,
      });
    }
    seen.add(rule.name);
    const stage = rule.stages.find((candidate) => !ALL_STAGES.includes(candidate));
    if (stage !== undefined || rule.stages.length === 0) {
      throw new ConfigurationError({
        message: `blockedPatterns: rule '${rule.name}' needs stages among ${ALL_STAGES.join(', ')}${stage === undefined ? '' : `, got '${stage}'`}`,
      });
    }
  }
  return rules.map((rule) => ({ ...rule, pattern: stateless(rule.pattern) }));
}

/**
 * A guardrail that blocks (never rewrites) text matching known attack
 * patterns: prompt injection in the user's message, and path traversal,
 * shell commands and code execution in agents' tasks. The rules are listed
 * in {@link BLOCKED_PATTERN_RULES}; `extra` adds rules, `disable` removes
 * built-in ones by name. A block's `reason` names the rule
 * (`rule 'path-traversal' matched`), never the text; its `message` is a
 * short sentence for the user.
 *
 * Patterns run on a normalised copy of the text (see
 * {@link BlockedPatternRule.pattern}), case-insensitively where the rule
 * says so, in windows of at most `maxScanLength` characters. Hooks are set
 * only for stages that have rules: with the defaults, `input` and
 * `toolInput`, so answers keep streaming.
 *
 * @example
 * ```ts
 * const guard = blockedPatterns({
 *   disable: ['dynamic-import'],
 *   extra: [{ name: 'internal-hostnames', pattern: /\b[\w-]+\.corp\.example\b/i, stages: ['output', 'toolOutput'] }],
 * });
 * new App({ name: 'desk', agents, guardrails: [guard] });
 * ```
 */
export function blockedPatterns({
  name = 'blocked-patterns',
  extra = [],
  disable = [],
  maxScanLength = 65_536,
  agents,
}: BlockedPatternsOptions = {}): Guardrail {
  if (!Number.isSafeInteger(maxScanLength) || maxScanLength < 2 * WINDOW_OVERLAP) {
    throw new ConfigurationError({
      message: `blockedPatterns: maxScanLength must be a whole number of at least ${2 * WINDOW_OVERLAP}, got ${maxScanLength}`,
    });
  }
  const rules = rulesOf(extra, disable);
  const guardrail: Guardrail = { name };
  for (const stage of ALL_STAGES) {
    const staged = rules.filter((rule) => rule.stages.includes(stage));
    if (!staged.length) continue;
    const check: GuardCheck = (text) => {
      const normalised = normalise(text);
      const rule = staged.find(({ pattern }) => matches(pattern, normalised, maxScanLength));
      if (!rule) return undefined;
      return {
        action: 'block',
        reason: `rule '${rule.name}' matched`,
        message: rule.message ?? DEFAULT_MESSAGE,
      };
    };
    guardrail[stage] = check;
  }
  if (agents) guardrail.agents = agents;
  return guardrail;
}
