import { isPercentAt, type Token } from './tokenize.js';

/**
 * Formats a result for people: integers as they are, other numbers to 12
 * significant digits so float noise disappears (`0.1 + 0.2` gives `0.3`).
 */
export function formatNumber(value: number): string {
  if (Object.is(value, -0)) return '0';
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  return String(Number(value.toPrecision(12)));
}

/**
 * Writes tokens back as a tidy expression: binary operators between spaces,
 * signs, percent signs, parentheses and function calls tight (`-2 * (3 + 4)%`).
 */
export function formatExpression(tokens: readonly Token[]): string {
  let text = '';
  let previous: Token | undefined;
  tokens.forEach((token, index) => {
    const afterOperand =
      previous !== undefined &&
      (previous.kind === 'number' ||
        previous.kind === 'name' ||
        previous.kind === 'right-paren' ||
        isPercentAt(tokens, index - 1));
    if (token.kind === 'operator') {
      if (isPercentAt(tokens, index)) text += '%';
      else if (afterOperand) text += ` ${token.text} `;
      else if (token.text === 'of') text += ' of ';
      else text += (/[-+]$/.test(text) ? ' ' : '') + token.text;
    } else if (token.kind === 'comma') {
      text += ', ';
    } else {
      // `2pi` and `3(4 + 5)` stay tight; after a name (`sqrt 16`, `pi e`) a space keeps words apart.
      const needsSpace =
        previous?.kind === 'name' && token.kind !== 'left-paren' && token.kind !== 'right-paren';
      text += (needsSpace ? ' ' : '') + token.text;
    }
    previous = token;
  });
  return text.replace(/\s+/g, ' ').trim();
}
