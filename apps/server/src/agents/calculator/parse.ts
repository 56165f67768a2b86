import { ValidationError } from '@switchboard/core';
import { CONSTANTS, isPercentAt, type Operator, startsOperand, type Token } from './tokenize.js';

/** A parsed arithmetic expression. */
export type ExpressionNode =
  | { type: 'number'; value: number }
  | { type: 'constant'; name: string }
  | { type: 'negate'; operand: ExpressionNode }
  | { type: 'percent'; operand: ExpressionNode }
  | { type: 'binary'; operator: Operator; left: ExpressionNode; right: ExpressionNode }
  | { type: 'call'; name: string; args: ExpressionNode[] };

/** Limits that keep a hostile expression cheap to reject. */
export interface ParseLimits {
  /** Most tokens an expression may have. */
  maxTokens?: number;
  /** Deepest nesting of parentheses, function calls and powers. */
  maxDepth?: number;
}

const describe = (token: Token | undefined) => (token ? `'${token.text}'` : 'the end of the expression');

/**
 * Parses tokens (all known: no `unknown` kind) into an expression tree.
 *
 * Precedence, lowest first: `+ -`; `* / % of` and implicit multiplication
 * (`2pi`, `3(4+5)`); unary minus; `^` (right-associative, so `2^3^2` is
 * `2^9` and `-2^2` is `-4`); postfix percent. Throws a {@link ValidationError}
 * whose message can be shown to the user.
 */
export function parse(
  tokens: readonly Token[],
  { maxTokens = 200, maxDepth = 32 }: ParseLimits = {},
): ExpressionNode {
  if (tokens.length === 0) throw new ValidationError({ message: 'the expression is empty' });
  if (tokens.length > maxTokens) {
    throw new ValidationError({
      message: `the expression is too long (at most ${maxTokens} numbers and operators)`,
    });
  }
  let index = 0;
  let depth = 0;
  const peek = () => tokens[index];
  const isOperator = (text: string) => peek()?.kind === 'operator' && peek()?.text === text;
  const fail = (message: string): never => {
    throw new ValidationError({ message });
  };
  const nested = <T>(parseInner: () => T): T => {
    depth++;
    if (depth > maxDepth) fail(`the expression is nested too deeply (at most ${maxDepth} levels)`);
    try {
      return parseInner();
    } finally {
      depth--;
    }
  };

  function parseAdditive(): ExpressionNode {
    let left = parseMultiplicative();
    while (isOperator('+') || isOperator('-')) {
      const operator = peek()?.text as Operator;
      index++;
      left = { type: 'binary', operator, left, right: parseMultiplicative() };
    }
    return left;
  }

  function parseMultiplicative(): ExpressionNode {
    let left = parseUnary();
    for (;;) {
      const token = peek();
      if (token?.kind === 'operator' && ['*', '/', '%', 'of'].includes(token.text)) {
        index++;
        left = { type: 'binary', operator: token.text as Operator, left, right: parseUnary() };
      } else if (token?.kind === 'name' || token?.kind === 'left-paren') {
        left = { type: 'binary', operator: '*', left, right: parseUnary() };
      } else {
        return left;
      }
    }
  }

  function parseUnary(): ExpressionNode {
    let negative = false;
    while (isOperator('-') || isOperator('+')) {
      if (peek()?.text === '-') negative = !negative;
      index++;
    }
    const operand = parsePower();
    return negative ? { type: 'negate', operand } : operand;
  }

  function parsePower(): ExpressionNode {
    const base = parsePostfix();
    if (!isOperator('^')) return base;
    index++;
    return nested(() => ({ type: 'binary', operator: '^', left: base, right: parseUnary() }));
  }

  function parsePostfix(): ExpressionNode {
    let operand = parsePrimary();
    while (isPercentAt(tokens, index)) {
      index++;
      operand = { type: 'percent', operand };
    }
    return operand;
  }

  function parsePrimary(): ExpressionNode {
    const token = peek();
    if (!token) return fail('the expression ends too early');
    if (token.kind === 'number') {
      index++;
      return { type: 'number', value: token.value ?? Number.NaN };
    }
    if (token.kind === 'left-paren') {
      index++;
      const inner = nested(parseAdditive);
      if (peek()?.kind !== 'right-paren') fail(`expected ')' but found ${describe(peek())}`);
      index++;
      return inner;
    }
    if (token.kind === 'name') {
      index++;
      if (CONSTANTS.has(token.text)) return { type: 'constant', name: token.text };
      return nested(() => parseCall(token.text));
    }
    return fail(`unexpected ${describe(token)}`);
  }

  function parseCall(name: string): ExpressionNode {
    if (isOperator('of')) index++;
    if (!startsOperand(peek()) && !isOperator('-')) fail(`${name} needs an argument, e.g. ${name}(2)`);
    if (peek()?.kind !== 'left-paren') return { type: 'call', name, args: [parseUnary()] };
    index++;
    const args: ExpressionNode[] = [];
    if (peek()?.kind === 'right-paren') fail(`${name}() needs an argument`);
    for (;;) {
      args.push(parseAdditive());
      if (peek()?.kind === 'comma') {
        index++;
        continue;
      }
      if (peek()?.kind === 'right-paren') {
        index++;
        return { type: 'call', name, args };
      }
      return fail(`expected ',' or ')' in ${name}(…) but found ${describe(peek())}`);
    }
  }

  const tree = parseAdditive();
  if (index < tokens.length) fail(`unexpected ${describe(peek())}`);
  return tree;
}
