import { ValidationError } from '@switchboard/core';
import { parseConversion } from './parse-request.js';
import { describeUnits, findUnit, type Unit } from './units.js';

/** A finished conversion. */
export interface Conversion {
  value: number;
  from: Unit;
  result: number;
  to: Unit;
  /** For people: `5 kilometers = 3.10686 miles`. */
  text: string;
}

const numberFormat = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });

/** Formats a quantity to 6 significant digits with thousands separators: `1,609.34`. */
export function formatQuantity(value: number): string {
  return numberFormat.format(Object.is(value, -0) ? 0 : value);
}

function resolve(name: string): Unit {
  const unit = findUnit(name);
  if (!unit)
    throw new ValidationError({
      message: `I don't know the unit '${name}'. I can convert ${describeUnits()}`,
    });
  return unit;
}

/**
 * Converts `value` from one unit to another, by name. Throws a
 * {@link ValidationError} for an unknown unit, units of different dimensions
 * or a temperature below absolute zero.
 */
export function convertUnits(value: number, fromName: string, toName: string): Conversion {
  const from = resolve(fromName);
  const to = resolve(toName);
  if (!Number.isFinite(value)) throw new ValidationError({ message: 'the amount must be a finite number' });
  if (from.dimension !== to.dimension) {
    throw new ValidationError({
      message: `cannot convert ${from.label(2)} (${from.dimension}) to ${to.label(2)} (${to.dimension})`,
    });
  }
  const base = from.toBase(value);
  if (from.dimension === 'temperature' && base < 0) {
    throw new ValidationError({
      message: `${formatQuantity(value)} ${from.label(value)} is below absolute zero`,
    });
  }
  const result = to.fromBase(base);
  // Choose singular or plural from the value as shown: 0.9999999999999999 yards reads "1 yard".
  const shown = (amount: number) => Number(amount.toPrecision(6));
  const text = `${formatQuantity(value)} ${from.label(shown(value))} = ${formatQuantity(result)} ${to.label(shown(result))}`;
  return { value, from, result, to, text };
}

/**
 * Reads a conversion from a message and performs it.
 * @example
 * ```ts
 * convert('convert 5 km to miles').text; // '5 kilometers = 3.10686 miles'
 * ```
 */
export function convert(message: string): Conversion {
  const { value, from, to } = parseConversion(message);
  return convertUnits(value, from, to);
}
