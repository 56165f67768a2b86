import { ValidationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import { type CalculatorLimits, calculate } from './calculate.js';

/**
 * Creates the calculator agent: finds the arithmetic in a message ("what is
 * 2 + 3 * 4?", "15% of 80", "the square root of 144") and evaluates it with
 * its own parser, never `eval`. Problems (division by zero, bad syntax, an
 * over-long or over-nested expression) are explained in the reply.
 */
export function createCalculatorAgent(limits: CalculatorLimits = {}): Agent {
  return defineAgent({
    name: 'calculator',
    description:
      'Evaluates arithmetic: + - * / % ^, parentheses, percentages, sqrt, abs, round, floor, ceil, min, max, sin, cos, tan, log, ln, exp, pi and e.',
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
      'what is',
      'how much is',
    ],
    metadata: { examples: ['what is 2 + 3 * 4?', 'calculate (1+2)^3', 'what is 15% of 80?', 'sqrt(2) * pi'] },
    run(message) {
      try {
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
