import { ValidationError } from '@switchboard/core';
import { evaluate } from './evaluate.js';
import { extractExpression } from './extract.js';
import { formatExpression, formatNumber } from './format.js';
import { parse } from './parse.js';

/** Limits that bound the work one message can cause. */
export interface CalculatorLimits {
  /** Longest message accepted, in characters. */
  maxLength?: number;
  /** Most numbers and operators in one expression. */
  maxTokens?: number;
  /** Deepest nesting of parentheses, function calls and powers. */
  maxDepth?: number;
}

/** A finished calculation. */
export interface Calculation {
  /** The expression as understood, tidied: `2 + 3 * 4`. */
  expression: string;
  value: number;
  /** The value formatted for people: `14`, `0.3`. */
  result: string;
}

/**
 * Finds the arithmetic in a message and evaluates it, without `eval`.
 * Throws a {@link ValidationError} whose message explains the problem to the
 * user: no arithmetic found, too long, too deeply nested, bad syntax,
 * division by zero, a result that is not a finite real number.
 *
 * @example
 * ```ts
 * calculate('what is 2 + 3 * 4?'); // { expression: '2 + 3 * 4', value: 14, result: '14' }
 * ```
 */
export function calculate(
  message: string,
  { maxLength = 1000, maxTokens = 200, maxDepth = 32 }: CalculatorLimits = {},
): Calculation {
  if (message.length > maxLength) {
    throw new ValidationError({ message: `the message is too long (at most ${maxLength} characters)` });
  }
  const tokens = extractExpression(message);
  if (!tokens) throw new ValidationError({ message: 'there is no arithmetic expression in the message' });
  const value = evaluate(parse(tokens, { maxTokens, maxDepth }));
  return { expression: formatExpression(tokens), value, result: formatNumber(value) };
}
