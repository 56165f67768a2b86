import { describe, expect, it } from 'vitest';
import { calculate } from '../src/agents/calculator/calculate.js';
import { slowdownOnHostileInput } from './support/slowdown.js';

/** What the user reads: `expression = result`. */
function answer(message: string): string {
  const { expression, result } = calculate(message);
  return `${expression} = ${result}`;
}

function errorOf(message: string, limits?: Parameters<typeof calculate>[1]): string {
  try {
    calculate(message, limits);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected '${message}' to fail`);
}

describe('calculator: arithmetic', () => {
  it.each([
    ['2 + 3 * 4', '2 + 3 * 4 = 14'],
    ['(2 + 3) * 4', '(2 + 3) * 4 = 20'],
    ['10 - 4 - 3', '10 - 4 - 3 = 3'],
    ['100 / 10 / 5', '100 / 10 / 5 = 2'],
    ['2^3^2', '2 ^ 3 ^ 2 = 512'],
    ['-2^2', '-2 ^ 2 = -4'],
    ['(-2)^2', '(-2) ^ 2 = 4'],
    ['2^-1', '2 ^ -1 = 0.5'],
    ['2 * -3', '2 * -3 = -6'],
    ['- - 3', '- -3 = 3'],
    ['+5 - +2', '+5 - +2 = 3'],
    ['7 % 3', '7 % 3 = 1'],
    ['-7 % 3', '-7 % 3 = -1'],
    ['2 ** 8', '2 ^ 8 = 256'],
    ['6 ÷ 3 × 2 − 1', '6 / 3 * 2 - 1 = 3'],
    ['1.5 * 4', '1.5 * 4 = 6'],
    ['.5 + .25', '.5 + .25 = 0.75'],
    ['0.1 + 0.2', '0.1 + 0.2 = 0.3'],
    ['1/3', '1 / 3 = 0.333333333333'],
    ['1e3 + 1', '1e3 + 1 = 1001'],
    ['1,000,000 / 4', '1,000,000 / 4 = 250000'],
    ['3(4+5)', '3(4 + 5) = 27'],
    ['(1+2)(3+4)', '(1 + 2)(3 + 4) = 21'],
    ['((((1))))', '((((1)))) = 1'],
    ['2^53 + 1', '2 ^ 53 + 1 = 9007199254740992'],
  ])('%s', (input, expected) => {
    expect(answer(input)).toBe(expected);
  });
});

describe('calculator: functions, constants and percentages', () => {
  it.each([
    ['sqrt(16) + 9', 'sqrt(16) + 9 = 13'],
    ['sqrt 16 + 9', 'sqrt 16 + 9 = 13'],
    ['cbrt(27)', 'cbrt(27) = 3'],
    ['abs(-3) - floor(2.7) + ceil(2.1)', 'abs(-3) - floor(2.7) + ceil(2.1) = 4'],
    ['round(2.5)', 'round(2.5) = 3'],
    ['round(3.14159, 2)', 'round(3.14159, 2) = 3.14'],
    ['min(4, 2, 8)', 'min(4, 2, 8) = 2'],
    ['max(1, 5, 3)', 'max(1, 5, 3) = 5'],
    ['sin(pi)', 'sin(pi) = 0'],
    ['cos(pi)', 'cos(pi) = -1'],
    ['tan(pi/4)', 'tan(pi / 4) = 1'],
    ['log(1000)', 'log(1000) = 3'],
    ['log(8, 2)', 'log(8, 2) = 3'],
    ['ln(e)', 'ln(e) = 1'],
    ['exp(1)', 'exp(1) = 2.71828182846'],
    ['pi', 'pi = 3.14159265359'],
    ['2pi', '2pi = 6.28318530718'],
    ['tau / 2', 'tau / 2 = 3.14159265359'],
    ['sqrt(sqrt(16))', 'sqrt(sqrt(16)) = 2'],
    ['15% of 80', '15% of 80 = 12'],
    ['80 + 15%', '80 + 15% = 92'],
    ['200 - 10%', '200 - 10% = 180'],
    ['50% * 10', '50% * 10 = 5'],
    ['50%', '50% = 0.5'],
  ])('%s', (input, expected) => {
    expect(answer(input)).toBe(expected);
  });
});

describe('calculator: finding the arithmetic in a sentence', () => {
  it.each([
    ['what is 2 + 3 * 4?', '2 + 3 * 4 = 14'],
    ['calculate (1+2)^3', '(1 + 2) ^ 3 = 27'],
    ['Could you compute 5 plus 7 times 2 for me, please?', '5 + 7 * 2 = 19'],
    ['what is 12 percent of 250?', '12% of 250 = 30'],
    ['what is 15% of 80', '15% of 80 = 12'],
    ['10 divided by 4', '10 / 4 = 2.5'],
    ['6 multiplied by 7', '6 * 7 = 42'],
    ['9 minus 10', '9 - 10 = -1'],
    ['3 x 4', '3 * 4 = 12'],
    ['7 mod 3', '7 % 3 = 1'],
    ['3 squared', '3 ^ 2 = 9'],
    ['2 cubed', '2 ^ 3 = 8'],
    ['2 to the power of 10', '2 ^ 10 = 1024'],
    ['what is the square root of 144', 'sqrt 144 = 12'],
    ['WHAT IS 2 + 2', '2 + 2 = 4'],
    ['2+2=?', '2 + 2 = 4'],
    ['what is pi?', 'pi = 3.14159265359'],
    ['what is the value of e', 'e = 2.71828182846'],
    ['I have 3 apples; what is 3 * 4 + 1?', '3 * 4 + 1 = 13'],
  ])('%s', (input, expected) => {
    expect(answer(input)).toBe(expected);
  });

  it.each([
    'hello there',
    'what year is 2024',
    '',
    'what is the meaning of life',
    'constructor',
    'what is valueOf',
  ])('says there is no arithmetic in %j', (input) => {
    expect(errorOf(input)).toBe('there is no arithmetic expression in the message');
  });
});

describe('calculator: errors the user can act on', () => {
  it.each([
    ['1/0', 'division by zero is undefined'],
    ['what is 10 / (5 - 5)', 'division by zero is undefined'],
    ['5 % 0', 'modulo by zero is undefined'],
    ['0^-1', 'division by zero is undefined (zero to a negative power)'],
    ['(1+2', "expected ')' but found the end of the expression"],
    ['1+2)', "unexpected ')'"],
    ['2 +', 'the expression ends too early'],
    ['2 3', "unexpected '3'"],
    ['max(1 2)', "expected ',' or ')' in max(…) but found '2'"],
    ['sqrt()', 'sqrt() needs an argument'],
    ['sqrt', 'sqrt needs an argument, e.g. sqrt(2)'],
    ['sqrt(1, 2)', 'sqrt() takes 1 argument, not 2'],
    ['round(1, 20)', 'round(x, digits) takes a whole number of digits from 0 to 12'],
    ['sqrt(-1)', 'cannot take the square root of a negative number'],
    ['log(0)', 'the logarithm is only defined for positive numbers and a positive base other than 1'],
    ['ln(-1)', 'the logarithm is only defined for positive numbers'],
    ['(-8)^(1/3)', 'the result is not a real number'],
    ['9^9^9', 'the result is too large to represent'],
    ['1e308 * 10', 'the result is too large to represent'],
  ])('%s → %s', (input, message) => {
    expect(errorOf(input)).toBe(message);
  });
});

describe('calculator: abuse', () => {
  it('rejects an over-long message before looking at it', () => {
    expect(errorOf(`1+${'1'.repeat(1000)}`)).toBe('the message is too long (at most 1000 characters)');
  });

  it('rejects an expression with too many numbers and operators', () => {
    expect(errorOf(`${'1+'.repeat(150)}1`)).toBe(
      'the expression is too long (at most 200 numbers and operators)',
    );
    expect(answer(`${'1+'.repeat(99)}1`)).toMatch(/= 100$/);
  });

  it('rejects deep nesting instead of overflowing the stack', () => {
    const nested = (depth: number) => `${'('.repeat(depth)}1${')'.repeat(depth)}`;
    expect(answer(nested(32))).toMatch(/= 1$/);
    expect(errorOf(nested(33))).toBe('the expression is nested too deeply (at most 32 levels)');
    expect(errorOf(`${'2^'.repeat(60)}2`)).toBe('the expression is nested too deeply (at most 32 levels)');
    expect(errorOf(`${'sqrt('.repeat(40)}1${')'.repeat(40)}`)).toBe(
      'the expression is nested too deeply (at most 32 levels)',
    );
  });

  it('keeps deep nesting safe even when the token and length limits are raised', () => {
    const limits = { maxLength: 1_000_000, maxTokens: 1_000_000 };
    expect(errorOf(`${'('.repeat(100_000)}1${')'.repeat(100_000)}`, limits)).toMatch(/nested too deeply/);
  });

  it('handles long runs of signs without recursion', () => {
    expect(answer(`${'-'.repeat(150)}1`)).toMatch(/= 1$/);
  });

  it('answers hostile input quickly', () => {
    const inputs = [
      '('.repeat(1000),
      `${'divided by '.repeat(90)}`,
      `${'9'.repeat(999)}!`,
      `${'1,'.repeat(499)}1`,
      `${'percent '.repeat(120)}`,
      `max(${'1,'.repeat(400)}1)`,
    ];
    // It may take longer than an ordinary question of the same length (it is refused after more work), but
    // not the orders of magnitude of catastrophic backtracking.
    expect(slowdownOnHostileInput(calculate, inputs, 'what is 2 + 3 * 4?')).toBeLessThan(1_000);
  });

  it('never evaluates code', () => {
    const global = globalThis as { pwned?: boolean };
    global.pwned = false;
    const attempts = [
      'globalThis.pwned = true',
      "constructor.constructor('globalThis.pwned = true')()",
      'process.exit(1)',
      "require('child_process').execSync('touch /tmp/pwned')",
      '__proto__.polluted = 1',
      'this.pwned = true; 1 + 1',
    ];
    for (const attempt of attempts) {
      try {
        calculate(attempt);
      } catch {
        // Refusing is fine.
      }
    }
    expect(global.pwned).toBe(false);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    delete global.pwned;
  });
});
