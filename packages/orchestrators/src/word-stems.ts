// Letters (with combining marks) and digits form separate tokens, so "5km" reads as "5" "km";
// any other visible character is a token of its own, so keywords such as "+" or "°c" can match.
const TOKEN = /[\p{L}\p{M}]+|\p{N}+|[^\s\p{L}\p{M}\p{N}]/gu;
const APOSTROPHES = /[\u2018\u2019\u02bc]/g;
const VOWEL = /[aeiouy]/;
const KEEP_FINAL_S = /(?:ss|us|is)$/;
const CONSONANT_Y = /[^aeiou]y$/;
// Double consonants that stay double after a suffix is removed ("calling" → "call", "missed" → "miss").
const KEEP_DOUBLE = new Set(['l', 's', 'z']);

// Every rule of `stem` starts at a word ending in one of these letters (`s`, `ied`/`ed`, `ing`, `e`, `y`):
// any other word, most words of a message and every number, is its own stem.
const STEMMED_ENDINGS = new Set(['s', 'd', 'g', 'e', 'y'].map((letter) => letter.charCodeAt(0)));

function undouble(word: string): string {
  const last = word.at(-1);
  if (
    word.length > 3 &&
    last === word.at(-2) &&
    last !== undefined &&
    !KEEP_DOUBLE.has(last) &&
    !VOWEL.test(last)
  ) {
    return word.slice(0, -1);
  }
  return word;
}

function removeSuffix(word: string, suffix: string): string | undefined {
  if (!word.endsWith(suffix)) return undefined;
  const base = word.slice(0, -suffix.length);
  return base.length >= 3 && VOWEL.test(base) ? base : undefined;
}

/**
 * Reduces an English word to a light stem so that simple inflections match:
 * plurals (`cities` → `citi`, `boxes` → `box`), `-ing` and `-ed` forms
 * (`converting`, `converted` → `convert`) and a silent final `e`
 * (`translate`, `translating` → `translat`). Deliberately much weaker than a
 * full stemmer: `conversion` does not reduce to `convert`. The rules know
 * English endings only; words of three letters or fewer are returned unchanged.
 *
 * @param word - one lower-case word.
 * @example
 * ```ts
 * stem('converting'); // 'convert'
 * stem('cities') === stem('city'); // true
 * ```
 */
export function stem(word: string): string {
  if (word.length <= 3 || !STEMMED_ENDINGS.has(word.charCodeAt(word.length - 1))) return word;
  let result = word;
  if (result.endsWith('ies') && result.length > 4) result = `${result.slice(0, -3)}i`;
  else if (result.endsWith('sses')) result = result.slice(0, -2);
  else if (result.endsWith('s') && !KEEP_FINAL_S.test(result)) result = result.slice(0, -1);

  if (result.endsWith('ied') && result.length > 4) result = `${result.slice(0, -3)}i`;
  else {
    const base =
      removeSuffix(result, 'ing') ?? (result.endsWith('eed') ? undefined : removeSuffix(result, 'ed'));
    if (base !== undefined) result = undouble(base);
  }

  if (result.length >= 4 && result.endsWith('e') && !result.endsWith('ee')) result = result.slice(0, -1);
  if (result.length >= 4 && CONSONANT_Y.test(result)) result = `${result.slice(0, -1)}i`;
  return result;
}

/**
 * Splits text into lower-case tokens: words, runs of digits, and single
 * symbols, as written (not stemmed). Matching token by token makes matches
 * whole-word: `cat` never matches inside `concatenate`.
 *
 * @example
 * ```ts
 * words("What's 5km in miles?"); // ['what', "'", 's', '5', 'km', 'in', 'miles', '?']
 * ```
 */
export function words(text: string): string[] {
  if (ASCII.test(text)) return asciiWords(text.toLowerCase());
  const normalized = text.normalize('NFC').toLowerCase().replace(APOSTROPHES, "'");
  return Array.from(normalized.matchAll(TOKEN), ([token]) => token);
}

const ASCII = /^[\x20-\x7e\t\n\r]*$/;

/**
 * {@link words} for lower-case printable ASCII, where the Unicode classes reduce
 * to letters, digits and other symbols: the same tokens, without a regular
 * expression (most messages to a router are plain ASCII).
 */
function asciiWords(text: string): string[] {
  const tokens: string[] = [];
  let start = -1;
  let kind = 0; // 0 none, 1 letters, 2 digits
  for (let index = 0; index <= text.length; index++) {
    const code = index < text.length ? text.charCodeAt(index) : 32;
    const next = code >= 97 && code <= 122 ? 1 : code >= 48 && code <= 57 ? 2 : 0;
    if (next === kind && next !== 0) continue;
    if (kind !== 0) tokens.push(text.slice(start, index));
    kind = next;
    start = index;
    // Any other visible character is a token of its own.
    if (next === 0 && code > 32 && code !== 127) tokens.push(text[index]!);
  }
  return tokens;
}

/**
 * {@link words}, each reduced with {@link stem}: the form keywords are matched in.
 *
 * @example
 * ```ts
 * tokenize('Converting 5 miles'); // ['convert', '5', 'mil']
 * ```
 */
export function tokenize(text: string): string[] {
  return words(text).map(stem);
}
