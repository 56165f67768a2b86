/**
 * The detectors behind `redactPii`: one linear-time pattern per kind that
 * finds candidates, then a check in code (Luhn, mod-97, digit counts) that
 * decides. Each pattern starts a match only where a token starts (a
 * lookbehind), and has no nested ambiguous quantifier, so a 64 KiB
 * adversarial text costs one pass, not one pass per position.
 * @module
 */

/** Replaces one found value (its text as written) with what the caller wants. */
export type Replace = (match: string) => string;

/** A local part, `@`, dot-separated labels, and a last label that starts with a letter. */
const EMAIL = /(?<![\w.%+-])[\w.%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z][A-Za-z0-9-]+/g;

/** Replaces every email address. */
export function redactEmails(text: string, replace: Replace): string {
  return text.replace(EMAIL, replace);
}

/**
 * A country code and check digits, then letters and digits, single spaces
 * allowed between them. The span is cut into IBANs in code: where an IBAN
 * ends is only known by its check.
 */
const IBAN_SPAN = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[A-Za-z0-9]| (?=[A-Za-z0-9]))+/g;
const IBAN_START = /^[A-Za-z]{2}\d{2}/;
const IBAN_SHAPE = /^[A-Z]{2}(?!00|01|99)\d{2}[A-Z0-9]{11,30}$/;

/**
 * The ISO 13616 check: 15 to 34 letters and digits, check digits 02–98, and
 * the number read with its first four characters moved to the end (A = 10 …
 * Z = 35) leaves 1 when divided by 97. Check digits 00, 01 and 99 pass the
 * division when 97, 98 and 02 would, but are never issued.
 */
export function isValidIban(compact: string): boolean {
  const iban = compact.toUpperCase();
  if (!IBAN_SHAPE.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const character of rearranged) {
    const code = character.charCodeAt(0);
    remainder = code >= 65 ? (remainder * 100 + code - 55) % 97 : (remainder * 10 + code - 48) % 97;
  }
  return remainder === 1;
}

/** The last token of the longest valid IBAN starting at `tokens[start]`, or -1. */
function ibanEnd(tokens: readonly string[], start: number): number {
  let compact = '';
  let end = -1;
  for (let index = start; index < tokens.length && compact.length + tokens[index]!.length <= 34; index++) {
    compact += tokens[index];
    if (compact.length >= 15 && isValidIban(compact)) end = index;
  }
  return end;
}

/** Replaces every IBAN that passes its check, written compact or in groups of four. */
export function redactIbans(text: string, replace: Replace): string {
  return text.replace(IBAN_SPAN, (span) => {
    const tokens = span.split(' ');
    const out: string[] = [];
    for (let index = 0; index < tokens.length; index++) {
      const end = IBAN_START.test(tokens[index]!) ? ibanEnd(tokens, index) : -1;
      if (end < 0) {
        out.push(tokens[index]!);
        continue;
      }
      out.push(replace(tokens.slice(index, end + 1).join(' ')));
      index = end;
    }
    return out.join(' ');
  });
}

/**
 * 13 to 19 digits, single spaces or dashes between them, not glued to a
 * word, a `+` or a longer run of digits (a match is always a whole run).
 */
const CARD = /(?<![\w+]|\d[ -])\d(?:[ -]?\d){12,18}(?![ -]?\d|\w)/g;

/** The Luhn check: doubling every second digit from the right, the sum is a multiple of 10. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = digits.length - 1, double = false; index >= 0; index--, double = !double) {
    let digit = digits.charCodeAt(index) - 48;
    if (double) digit = digit > 4 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * Whether the number starts like a card of a major network: Visa (4),
 * Mastercard (51–55, 2221–2720), Maestro, Discover and UnionPay (5, 6), Amex
 * (34, 37), Diners (30, 36, 38, 39), JCB (35). Order numbers and timestamps
 * (1…, 7…, 8…, 9…, 2026…) are left alone even when their Luhn check passes.
 */
function hasCardPrefix(digits: string): boolean {
  switch (digits[0]) {
    case '4':
    case '5':
    case '6':
      return true;
    case '3':
      return digits[1] !== '1' && digits[1] !== '2' && digits[1] !== '3';
    case '2': {
      const prefix = Number(digits.slice(0, 4));
      return prefix >= 2221 && prefix <= 2720;
    }
    default:
      return false;
  }
}

/** Replaces every payment card number whose Luhn check passes. */
export function redactCards(text: string, replace: Replace): string {
  return text.replace(CARD, (match) => {
    const digits = match.replace(/\D/g, '');
    return passesLuhn(digits) && hasCardPrefix(digits) ? replace(match) : match;
  });
}

/** A phone candidate cut into groups of digits, each with what was written before it. */
interface Groups {
  separators: string[];
  digits: string[];
  ends: number[];
}

function groupsOf(match: string): Groups {
  const groups: Groups = { separators: [], digits: [], ends: [] };
  for (const part of match.matchAll(/(\D*)(\d+)/g)) {
    groups.separators.push(part[1]!);
    groups.digits.push(part[2]!);
    groups.ends.push(part.index + part[0].length);
  }
  return groups;
}

/**
 * Replaces the longest prefix of `match` that ends after a group and that
 * `valid` accepts (the candidate patterns are greedy: `+44 20 7946 0958 2026`
 * is a number and a year). Candidates are short: `valid` stops the scan
 * (returns `'stop'`) once the prefix has too many digits.
 */
function redactPrefix(
  match: string,
  replace: Replace,
  valid: (groups: Groups, last: number) => boolean | 'stop',
): string {
  const groups = groupsOf(match);
  let end = 0;
  for (let last = 0; last < groups.digits.length; last++) {
    const verdict = valid(groups, last);
    if (verdict === 'stop') break;
    // Never end inside a parenthesised group: `+44 (0` is not a number.
    if (verdict && !groups.separators[last + 1]?.startsWith(')')) end = groups.ends[last]!;
  }
  return end === 0 ? match : replace(match.slice(0, end)) + match.slice(end);
}

/**
 * `+` or `00`, then groups of digits separated by one space, dot or dash,
 * or by a parenthesised group: `+44 (0)20 7946 0958`, `+1 (415) 555-2671`.
 */
const INTERNATIONAL_PHONE = /(?<![\w+])(?:\+|00(?=[1-9]))\d+(?:(?:[ .-]?\(\d{1,4}\)[ .-]?|[ .-])\d+)*/g;

/**
 * 9 to 15 digits after `+` or `00` (E.164 allows 15; a `(0)` trunk prefix is
 * not counted). After `00`, the country code stands alone and what follows
 * it does not start with `0`, so that `0044 0532 0130` (a piece of an
 * account number) is not taken for one.
 */
function validInternational({ separators, digits }: Groups, last: number): boolean | 'stop' {
  const plus = separators[0] === '+';
  if (!plus && (digits[0]!.length > 5 || digits[1]?.startsWith('0'))) return 'stop';
  let count = plus ? 0 : -2;
  for (let index = 0; index <= last; index++) {
    const trunk =
      digits[index] === '0' && separators[index]!.endsWith('(') && separators[index + 1]?.startsWith(')');
    if (!trunk) count += digits[index]!.length;
  }
  if (count > 15) return 'stop';
  return count >= 9 && (plus || last > 0);
}

/** North American numbers with separators: `(415) 555-2671`, `415.555.2671`, `1-800-555-0199`. */
const NANP_PHONE =
  /(?<![\w.+\-/])(?:1[ .-])?(?:\([2-9]\d{2}\)[ .-]?|[2-9]\d{2}[ .-])[2-9]\d{2}[ .-]\d{4}(?!\w|[./-]\d)/g;

/**
 * National numbers with a trunk `0` and separators: `020 7946 0958`,
 * `(020) 7946 0958`, `030/901820`, `0171 1234567`, `01 42 68 53 00`,
 * `06.12.34.56.78`. Bare runs of digits are left alone (order ids).
 */
const NATIONAL_PHONE = /(?<![\w.+\-/])(?:\(0\d{1,4}\) ?|0\d{1,4}[ ./-])\d+(?:[ .-]\d+)*/g;

/**
 * An area code of 2–5 digits (not `00`), groups of 2–8 digits, 9–12 digits
 * in all, one separator kind after the area code (dots only in the French
 * five-pair form, so `05.11.2026` stays a date), and not day-month-year.
 */
function validNational({ separators, digits }: Groups, last: number): boolean | 'stop' {
  const area = digits[0]!;
  if (area.length > 5 || area[1] === '0') return 'stop';
  // 05 11 2026: a date, whatever follows.
  if (area.length === 2 && digits[1]?.length === 2 && digits[2]?.length === 4) return 'stop';
  let count = 0;
  for (let index = 0; index <= last; index++) count += digits[index]!.length;
  if (count > 12) return 'stop';
  if (last === 0 || count < 9) return false;
  for (let index = 1; index <= last; index++) {
    const length = digits[index]!.length;
    if (length < 2 || length > 8) return 'stop';
  }
  const rest = separators.slice(2, last + 1);
  if (separators[1] === '.' || rest.includes('.')) {
    return (
      last === 4 &&
      separators.slice(1, 5).every((separator) => separator === '.') &&
      digits.slice(0, 5).every((group) => group.length === 2)
    );
  }
  if (rest.some((separator) => separator !== rest[0])) return 'stop';
  return true;
}

/** Replaces every phone number: international forms first, then North American, then national. */
export function redactPhones(text: string, replace: Replace): string {
  return text
    .replace(INTERNATIONAL_PHONE, (match) => redactPrefix(match, replace, validInternational))
    .replace(NANP_PHONE, replace)
    .replace(NATIONAL_PHONE, (match) => redactPrefix(match, replace, validNational));
}
