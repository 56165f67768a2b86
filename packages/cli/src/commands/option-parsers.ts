import { InvalidArgumentError } from 'commander';

/** Parses a whole number above zero. */
export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new InvalidArgumentError('expected a whole number above 0');
  return number;
}

/** Parses a rate between 0 and 1. */
export function rate(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || number > 1)
    throw new InvalidArgumentError('expected a number between 0 and 1');
  return number;
}

const GATED = ['accuracy', 'routing', 'trajectoryExact', 'trajectoryInOrder'] as const;

/** Parses one metric of `--gate`, adding it to those given before (the default list is replaced). */
export function gatedMetric(
  value: string,
  previous: readonly string[] | undefined,
): (typeof GATED)[number][] {
  if (!(GATED as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected one of ${GATED.join(', ')}`);
  const earlier = previous === GATE_DEFAULT ? [] : (previous ?? []);
  return [...earlier, value] as (typeof GATED)[number][];
}

/** The metrics `--gate` gates when it is not given. */
export const GATE_DEFAULT: readonly (typeof GATED)[number][] = ['accuracy'];
