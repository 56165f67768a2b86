import { ValidationError } from '@switchboard/core';
import type { ExpressionNode } from './parse.js';
import { CONSTANTS } from './tokenize.js';

interface FunctionDefinition {
  minArgs: number;
  maxArgs: number;
  apply: (args: number[]) => number;
}

const fail = (message: string): never => {
  throw new ValidationError({ message });
};

/** Trigonometry of multiples of π leaves float dust (sin(π) = 1.2e-16); snap it to the exact value. */
const snap = (value: number) => {
  const nearest = Math.round(value);
  return Math.abs(value - nearest) < 1e-12 ? nearest : value;
};

const one = (apply: (value: number) => number): FunctionDefinition => ({
  minArgs: 1,
  maxArgs: 1,
  apply: ([value = Number.NaN]) => apply(value),
});

const FUNCTIONS: ReadonlyMap<string, FunctionDefinition> = new Map(
  Object.entries({
    sqrt: one((value) =>
      value < 0 ? fail('cannot take the square root of a negative number') : Math.sqrt(value),
    ),
    cbrt: one(Math.cbrt),
    abs: one(Math.abs),
    floor: one(Math.floor),
    ceil: one(Math.ceil),
    round: {
      minArgs: 1,
      maxArgs: 2,
      apply: ([value = Number.NaN, digits = 0]) => {
        if (!Number.isInteger(digits) || digits < 0 || digits > 12) {
          fail('round(x, digits) takes a whole number of digits from 0 to 12');
        }
        const factor = 10 ** digits;
        return Math.round(value * factor) / factor;
      },
    },
    min: { minArgs: 1, maxArgs: 100, apply: (args) => Math.min(...args) },
    max: { minArgs: 1, maxArgs: 100, apply: (args) => Math.max(...args) },
    sin: one((value) => snap(Math.sin(value))),
    cos: one((value) => snap(Math.cos(value))),
    tan: one((value) => snap(Math.tan(value))),
    exp: one(Math.exp),
    ln: one((value) =>
      value <= 0 ? fail('the logarithm is only defined for positive numbers') : Math.log(value),
    ),
    log: {
      minArgs: 1,
      maxArgs: 2,
      apply: ([value = Number.NaN, base = 10]) => {
        if (value <= 0 || base <= 0 || base === 1) {
          fail('the logarithm is only defined for positive numbers and a positive base other than 1');
        }
        return base === 10 ? Math.log10(value) : Math.log(value) / Math.log(base);
      },
    },
  }),
);

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function call(name: string, args: number[]): number {
  const definition = FUNCTIONS.get(name) ?? fail(`unknown function '${name}'`);
  const { minArgs, maxArgs } = definition;
  if (args.length < minArgs || args.length > maxArgs) {
    const expected = minArgs === maxArgs ? plural(minArgs, 'argument') : `${minArgs} to ${maxArgs} arguments`;
    fail(`${name}() takes ${expected}, not ${args.length}`);
  }
  return definition.apply(args);
}

function compute(node: ExpressionNode): number {
  switch (node.type) {
    case 'number':
      return node.value;
    case 'constant':
      return CONSTANTS.get(node.name) ?? fail(`unknown constant '${node.name}'`);
    case 'negate':
      return -evaluate(node.operand);
    case 'percent':
      return evaluate(node.operand) / 100;
    case 'call':
      return call(
        node.name,
        node.args.map((arg) => evaluate(arg)),
      );
    case 'binary': {
      const left = evaluate(node.left);
      const right = evaluate(node.right);
      switch (node.operator) {
        case '+':
        case '-': {
          // `80 + 15%` means 80 increased by 15 percent, as on a desk calculator.
          const change = node.right.type === 'percent' ? left * right : right;
          return node.operator === '+' ? left + change : left - change;
        }
        case '*':
        case 'of':
          return left * right;
        case '/':
          return right === 0 ? fail('division by zero is undefined') : left / right;
        case '%':
          return right === 0 ? fail('modulo by zero is undefined') : left % right;
        case '^':
          if (left === 0 && right < 0) fail('division by zero is undefined (zero to a negative power)');
          return left ** right;
      }
    }
  }
}

/**
 * Evaluates an expression tree. Throws a {@link ValidationError} with a
 * message for the user on division by zero, a domain error (square root of a
 * negative number, logarithm of zero) or a result too large to represent.
 */
export function evaluate(node: ExpressionNode): number {
  const value = compute(node);
  if (Number.isNaN(value)) fail('the result is not a real number');
  if (!Number.isFinite(value)) fail('the result is too large to represent');
  return value;
}
