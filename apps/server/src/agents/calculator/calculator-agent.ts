import { ValidationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import { type CalculatorLimits, calculate } from './calculate.js';
import { findTip } from './tip.js';

/**
 * Creates the calculator agent: finds the arithmetic in a message ("what is
 * 2 + 3 * 4?", "15% of 80", "25% off 80", "the square root of 144") and
 * evaluates it with its own parser, never `eval`; works out tips ("a 20% tip
 * on $45"). Problems (no arithmetic in the message, division by zero, bad
 * syntax, an over-long or over-nested expression) are explained in the reply.
 *
 * Its keywords are arithmetic words and symbols, not "what is": a question
 * such as "what is the capital of France?" must not reach the calculator.
 */
export function createCalculatorAgent(limits: CalculatorLimits = {}): Agent {
  return defineAgent({
    name: 'calculator',
    description:
      'Evaluates arithmetic: + - * / % ^, parentheses, percentages (15% of 80, 25% off 80), tips, sqrt, abs, round, floor, ceil, min, max, sin, cos, tan, log, ln, exp, pi and e.',
    // Symbols and arithmetic words: a number alone is no keyword, so "what's 100/8" needs the "/".
    keywords: [
      'calculate',
      'calculator',
      'compute',
      'evaluate',
      'math',
      'arithmetic',
      'plus',
      'minus',
      'times',
      'multiplied',
      'divided',
      'sum',
      'percent',
      'square root',
      'sqrt',
      'squared',
      'cubed',
      'power',
      'tip',
      'pi',
      '+',
      '-',
      '*',
      '/',
      '^',
      '%',
      '×',
      '÷',
      'x',
    ],
    metadata: {
      examples: [
        'what is 2 + 3 * 4?',
        'calculate (1+2)^3',
        "what's 15% of 80?",
        'a 20% tip on $45',
        'sqrt(2) * pi',
      ],
    },
    run(message) {
      try {
        const tip = findTip(message);
        if (tip) return tip.text;
        const { expression, result } = calculate(message, limits);
        return `${expression} = ${result}`;
      } catch (error) {
        if (ValidationError.isInstance(error))
          return `Sorry, I could not calculate that: ${(error as Error).message}.`;
        throw error;
      }
    },
  });
}

/** The calculator agent with the default limits. */
export const calculatorAgent: Agent = createCalculatorAgent();
