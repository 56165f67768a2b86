import { type Token, tokenize } from './tokenize.js';

/** Multi-word phrases rewritten to operators before tokenizing. */
const PHRASES: ReadonlyArray<[RegExp, string]> = [
  [/\bdivided\s+by\b/g, ' / '],
  [/\bmultiplied\s+by\b/g, ' * '],
  [/\b(?:raised\s+)?to\s+the\s+power\s+of\b/g, ' ^ '],
  [/\b(?:raised\s+)?to\s+the\s+power\b/g, ' ^ '],
  [/\braised\s+to\b/g, ' ^ '],
  [/\bsquared\b/g, ' ^ 2 '],
  [/\bcubed\b/g, ' ^ 3 '],
  [/\b(?:the\s+)?square\s+root\s+of\b/g, ' sqrt '],
  [/\b(?:the\s+)?cube\s+root\s+of\b/g, ' cbrt '],
  [/\s*\bper\s?cent\b/g, '% '],
  // "25% off 80" is 80 less 25 percent, as a price after a discount.
  [/(\d[\d,]*(?:\.\d+)?)\s*%\s*off\s+(?:of\s+)?(\d[\d,]*(?:\.\d+)?)/g, ' $2 - $1% '],
];

/** A currency sign before an amount ("$45") is dropped: it would split the expression. */
const CURRENCY = /[$€£¥](?=\s*\d)/g;

/** Words that can neither start an expression (`of 2`) nor end one (`2 +`) are trimmed from a candidate. */
const cannotStart = (token: Token) =>
  token.kind === 'comma' ||
  token.kind === 'right-paren' ||
  (token.kind === 'operator' && token.text !== '-' && token.text !== '+');
const cannotEnd = (token: Token) =>
  token.kind === 'comma' || (token.kind === 'operator' && token.text === 'of');

/**
 * Lower-cases the text, drops currency signs before amounts, and rewrites
 * operator phrases ("divided by", "squared", "percent", "25% off 80") to symbols.
 */
export function normalize(text: string): string {
  let normalized = text.toLowerCase().replace(CURRENCY, '');
  for (const [pattern, replacement] of PHRASES) normalized = normalized.replace(pattern, replacement);
  return normalized;
}

/**
 * Finds the arithmetic in a sentence: the longest run of arithmetic tokens
 * that holds at least one number or constant and is more than a lone number. "what is 2 + 3 * 4?" gives the
 * tokens of `2 + 3 * 4`; a sentence without arithmetic gives `undefined`.
 */
export function extractExpression(text: string): Token[] | undefined {
  const tokens = tokenize(normalize(text));
  let best: Token[] | undefined;
  let run: Token[] = [];
  const consider = () => {
    while (run.length > 0 && cannotStart(run[0] as Token)) run.shift();
    while (run.length > 0 && cannotEnd(run[run.length - 1] as Token)) run.pop();
    const hasValue = run.some((token) => token.kind === 'number' || token.kind === 'name');
    // A lone number ("in 2024") is not a calculation; a lone constant ("what is pi") is.
    const isCalculation = hasValue && (run.length > 1 || run[0]?.kind === 'name');
    if (isCalculation && run.length > (best?.length ?? 0)) best = run;
    run = [];
  };
  for (const token of tokens) {
    if (token.kind === 'unknown') consider();
    else run.push(token);
  }
  consider();
  return best;
}
