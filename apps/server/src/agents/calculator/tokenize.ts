/** What a piece of text is, to the calculator. `unknown` marks words and symbols that are not arithmetic. */
export type TokenKind = 'number' | 'operator' | 'name' | 'left-paren' | 'right-paren' | 'comma' | 'unknown';

/** Binary operators in canonical form; `%` is modulo or, in postfix position, percent. */
export type Operator = '+' | '-' | '*' | '/' | '%' | '^' | 'of';

/** One token of the input, with its canonical text and where it came from. */
export interface Token {
  kind: TokenKind;
  /** Canonical text: `*` for `×`, `times` or `x`; the lower-case name for a function or constant. */
  text: string;
  /** The numeric value of a `number` token. */
  value?: number;
  /** Offset of the token in the normalized text. */
  start: number;
}

/** Constants the calculator knows, by name. */
export const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ['pi', Math.PI],
  ['π', Math.PI],
  ['tau', 2 * Math.PI],
  ['e', Math.E],
]);

/** Function names the calculator knows (their arity lives with their implementation). */
export const FUNCTION_NAMES: ReadonlySet<string> = new Set([
  'sqrt',
  'cbrt',
  'abs',
  'round',
  'floor',
  'ceil',
  'min',
  'max',
  'sin',
  'cos',
  'tan',
  'log',
  'ln',
  'exp',
]);

// Maps, not object literals: a word like "constructor" must not find Object.prototype members.
const SYMBOL_OPERATORS: ReadonlyMap<string, Operator> = new Map([
  ['+', '+'],
  ['-', '-'],
  ['−', '-'],
  ['–', '-'],
  ['*', '*'],
  ['×', '*'],
  ['·', '*'],
  ['/', '/'],
  ['÷', '/'],
  ['%', '%'],
  ['^', '^'],
]);

const WORD_OPERATORS: ReadonlyMap<string, Operator> = new Map([
  ['plus', '+'],
  ['minus', '-'],
  ['times', '*'],
  ['x', '*'],
  ['over', '/'],
  ['mod', '%'],
  ['modulo', '%'],
  ['of', 'of'],
]);

const GROUPED_NUMBER = /\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d|,\d)/y;
const PLAIN_NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?/iy;
const WORD = /[a-zπ]+/iy;

function match(pattern: RegExp, text: string, position: number): string | undefined {
  pattern.lastIndex = position;
  return pattern.exec(text)?.[0];
}

/**
 * Splits text into tokens. Never fails: anything that is not arithmetic
 * becomes an `unknown` token, so the expression can be found inside a sentence.
 * Commas group thousands (`1,000`) outside parentheses and separate function
 * arguments inside them.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let depth = 0;
  let position = 0;
  while (position < text.length) {
    const character = text[position] ?? '';
    if (/\s/.test(character)) {
      position++;
      continue;
    }
    const start = position;
    const grouped = depth === 0 ? match(GROUPED_NUMBER, text, position) : undefined;
    const number = grouped ?? match(PLAIN_NUMBER, text, position);
    if (number) {
      tokens.push({
        kind: 'number',
        text: number.replace(/\.$/, ''),
        value: Number(number.replaceAll(',', '')),
        start,
      });
      position += number.length;
      continue;
    }
    const word = match(WORD, text, position);
    if (word) {
      const lower = word.toLowerCase();
      const operator = WORD_OPERATORS.get(lower);
      if (operator) tokens.push({ kind: 'operator', text: operator, start });
      else if (CONSTANTS.has(lower) || FUNCTION_NAMES.has(lower))
        tokens.push({ kind: 'name', text: lower, start });
      else tokens.push({ kind: 'unknown', text: word, start });
      position += word.length;
      continue;
    }
    if (text.startsWith('**', position)) {
      tokens.push({ kind: 'operator', text: '^', start });
      position += 2;
      continue;
    }
    const operator = SYMBOL_OPERATORS.get(character);
    if (operator) tokens.push({ kind: 'operator', text: operator, start });
    else if (character === '(') {
      depth++;
      tokens.push({ kind: 'left-paren', text: '(', start });
    } else if (character === ')') {
      depth = Math.max(0, depth - 1);
      tokens.push({ kind: 'right-paren', text: ')', start });
    } else if (character === ',') tokens.push({ kind: 'comma', text: ',', start });
    else tokens.push({ kind: 'unknown', text: character, start });
    position++;
  }
  return tokens;
}

/** True when a token can begin an operand: a number, a name or an opening parenthesis. */
export function startsOperand(token: Token | undefined): boolean {
  return token?.kind === 'number' || token?.kind === 'name' || token?.kind === 'left-paren';
}

/**
 * True when the `%` at `index` means "percent" rather than "modulo": it is
 * percent unless an operand follows it (`15%`, `15% of 80`, `50% - 10`).
 */
export function isPercentAt(tokens: readonly Token[], index: number): boolean {
  const token = tokens[index];
  return token?.kind === 'operator' && token.text === '%' && !startsOperand(tokens[index + 1]);
}
