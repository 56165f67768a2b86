import { describe, expect, it } from 'vitest';
import { convert, convertUnits } from '../src/agents/converter/convert.js';
import { findUnit, UNITS } from '../src/agents/converter/units.js';
import { slowdownOnHostileInput } from './support/slowdown.js';

function errorOf(message: string): string {
  try {
    convert(message);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected '${message}' to fail`);
}

describe('converter: phrasing', () => {
  it.each([
    ['convert 5 km to miles', '5 kilometers = 3.10686 miles'],
    ['72 fahrenheit in celsius', '72 °F = 22.2222 °C'],
    ['how many ounces in 2 lb', '2 pounds = 32 ounces'],
    ['how many cups are in a gallon?', '1 US gallon = 16 US cups'],
    ['how many ml are in 3 cups', '3 US cups = 709.765 milliliters'],
    ['2 lb is how many ounces', '2 pounds = 32 ounces'],
    ['what is 10 kilometers per hour in mph', '10 km/h = 6.21371 mph'],
    ['convert km to miles', '1 kilometer = 0.621371 miles'],
    ['72 degrees F in C', '72 °F = 22.2222 °C'],
    ['20°C to °F', '20 °C = 68 °F'],
    ['Convert 1 KM to MI', '1 kilometer = 0.621371 miles'],
    ['1,000 m to km', '1,000 meters = 1 kilometer'],
    ['5km into m', '5 kilometers = 5,000 meters'],
    ['12 in to cm', '12 inches = 30.48 centimeters'],
    ['convert 30 cm to in', '30 centimeters = 11.811 inches'],
    ['-3.5 kg as lbs', '-3.5 kilograms = -7.71618 pounds'],
  ])('%s', (input, expected) => {
    expect(convert(input).text).toBe(expected);
  });
});

describe('converter: every dimension', () => {
  it.each([
    [1, 'mi', 'm', '1 mile = 1,609.34 meters'],
    [1, 'mi', 'ft', '1 mile = 5,280 feet'],
    [3, 'ft', 'yd', '3 feet = 1 yard'],
    [1, 'in', 'mm', '1 inch = 25.4 millimeters'],
    [1, 'kg', 'g', '1 kilogram = 1,000 grams'],
    [1, 'lb', 'kg', '1 pound = 0.453592 kilograms'],
    [16, 'oz', 'lb', '16 ounces = 1 pound'],
    [100, 'c', 'f', '100 °C = 212 °F'],
    [32, 'f', 'c', '32 °F = 0 °C'],
    [-40, 'c', 'f', '-40 °C = -40 °F'],
    [0, 'k', 'c', '0 K = -273.15 °C'],
    [25, 'c', 'k', '25 °C = 298.15 K'],
    [1, 'gal', 'l', '1 US gallon = 3.78541 liters'],
    [1, 'cup', 'ml', '1 US cup = 236.588 milliliters'],
    [60, 'mph', 'km/h', '60 mph = 96.5606 km/h'],
    [10, 'm/s', 'km/h', '10 m/s = 36 km/h'],
    [1, 'gb', 'mb', '1 GB = 1,000 MB'],
    [1500, 'megabytes', 'gigabytes', '1,500 MB = 1.5 GB'],
    [1, 'tb', 'bytes', '1 TB = 1,000,000,000,000 B'],
    [5, 'km', 'km', '5 kilometers = 5 kilometers'],
  ])('%d %s → %s', (value, from, to, expected) => {
    expect(convertUnits(value, from, to).text).toBe(expected);
  });

  it('converts there and back without drift', () => {
    for (const from of UNITS) {
      for (const to of UNITS.filter((unit) => unit.dimension === from.dimension)) {
        const there = convertUnits(123.456, from.symbol, to.symbol).result;
        expect(convertUnits(there, to.symbol, from.symbol).result).toBeCloseTo(123.456, 9);
      }
    }
  });

  it('finds units by name, plural and abbreviation, case-insensitively', () => {
    expect(findUnit('Kilometres')?.symbol).toBe('km');
    expect(findUnit('feet')?.symbol).toBe('ft');
    expect(findUnit('LBS')?.symbol).toBe('lb');
    expect(findUnit('miles  per   hour')?.symbol).toBe('mph');
    expect(findUnit('Fahrenheit')?.symbol).toBe('°F');
    expect(findUnit('parsec')).toBeUndefined();
  });
});

describe('converter: errors', () => {
  it('refuses units of different dimensions, naming both', () => {
    expect(errorOf('5 kg to meters')).toBe('cannot convert kilograms (mass) to meters (length)');
    expect(errorOf('5 km to miles per hour')).toBe('cannot convert kilometers (length) to mph (speed)');
    expect(errorOf('20 c to gb')).toBe('cannot convert °C (temperature) to GB (data)');
  });

  it('names an unknown unit and lists the known ones', () => {
    const message = errorOf('convert 5 parsecs to km');
    expect(message).toMatch(
      /^I don't know the unit 'parsecs'\. I can convert length \(mm, cm, m, km, in, ft, yd, mi\)/,
    );
    expect(message).toContain('temperature (°C, °F, K)');
    expect(message).toContain('data (B, KB, MB, GB, TB)');
    expect(errorOf('10 km to furlongs')).toMatch(/^I don't know the unit 'furlongs'/);
  });

  it('refuses a temperature below absolute zero', () => {
    expect(errorOf('-500 c to f')).toBe('-500 °C is below absolute zero');
    expect(errorOf('-1 k to c')).toBe('-1 K is below absolute zero');
  });

  it('explains what it needs when the message holds no conversion', () => {
    expect(errorOf('hello')).toBe(
      "I need an amount, a unit and a target unit, e.g. 'convert 5 km to miles' or 'how many ounces in 2 lb'",
    );
    expect(errorOf('convert 5 km')).toMatch(/^I need an amount, a unit and a target unit/);
  });

  it('refuses an over-long message quickly', () => {
    expect(errorOf(`convert ${'5 km '.repeat(200)} to miles`)).toBe(
      'the message is too long (at most 500 characters)',
    );
    const hostile = ['1'.repeat(499), `${'a '.repeat(249)}`, `how many ${'x '.repeat(240)}`];
    // It may take longer than an ordinary question of the same length (it is refused after more work), but
    // not the orders of magnitude of catastrophic backtracking.
    expect(slowdownOnHostileInput(convert, hostile, 'convert 5 km to miles')).toBeLessThan(1_000);
  });
});
